//! The framework knows nothing about any guest language: `meta-jit` depends on no interpreter
//! crate, and its source never names an opcode or type of the interpreters written on it
//! (those in `interpreters/` and the test VMs of this crate) outside comments.

use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
}

/// Names of enum variants and types declared by the guest interpreters.
fn guest_names(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for d in ["interpreters", "tests/tests"] {
        if root.join(d).exists() {
            sources(&root.join(d), &mut files);
        }
    }
    // An interpreter's own source, not its test generators (whose names are Rust's or the
    // test's, such as a generated value's type).
    files.retain(|(p, _)| !p.contains("/interpreters/") || p.contains("/src/"));
    let mut names = Vec::new();
    for (_, text) in files {
        let mut in_enum = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with("pub enum ") || line.starts_with("enum ") {
                in_enum = true;
                continue;
            }
            if in_enum {
                if line.starts_with('}') {
                    in_enum = false;
                } else if let Some(n) = line.split(['(', ',', ' ', '{']).next() {
                    if n.len() > 3 && n.chars().next().unwrap().is_ascii_uppercase() {
                        names.push(n.to_string());
                    }
                }
            }
        }
    }
    // Names that are Rust's own (a derive, a trait), not a guest's.
    let rust = [
        "Hash", "Clone", "Copy", "Debug", "Default", "Some", "None", "Self",
    ];
    names.retain(|n| !rust.contains(&n.as_str()));
    names.sort();
    names.dedup();
    names
}

#[test]
fn meta_jit_names_no_guest_opcode_and_depends_on_no_interpreter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let manifest = std::fs::read_to_string(root.join("meta-jit/Cargo.toml")).unwrap();
    let deps = manifest.split("[dependencies]").nth(1).unwrap();
    let deps = deps.split("\n[").next().unwrap();
    for line in deps.lines().filter(|l| !l.trim().is_empty()) {
        let name = line.split(['.', '=', ' ']).next().unwrap();
        assert!(
            [
                "union-find",
                "hashbrown",
                "smallvec",
                "quickcheck",
                "dynasmrt",
                "libc",
                "iced-x86",
                "hints-macros"
            ]
            .contains(&name),
            "meta-jit depends on `{name}`: the framework must not depend on an interpreter"
        );
    }
    let names = guest_names(root);
    assert!(
        names.contains(&"IncMemJlt".to_string()),
        "the scan finds the test VM's opcodes"
    );
    let mut files = Vec::new();
    sources(&root.join("meta-jit/src"), &mut files);
    sources(&root.join("hints-macros/src"), &mut files);
    for (path, text) in files {
        // Code only: a doc comment may use a guest opcode as an example.
        let text: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        for n in &names {
            let hit = text.match_indices(n.as_str()).any(|(i, _)| {
                let before = text[..i].chars().last().unwrap_or(' ');
                let after = text[i + n.len()..].chars().next().unwrap_or(' ');
                !before.is_alphanumeric()
                    && !after.is_alphanumeric()
                    && before != '_'
                    && after != '_'
            });
            assert!(
                !hit,
                "{path} names `{n}`, an opcode or type of a guest interpreter"
            );
        }
    }
}

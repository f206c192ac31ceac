//! The book's "The public API" lists meta-jit's public modules and its features; this keeps the
//! list equal to the crate (`meta-jit/src/lib.rs`, `meta-jit/Cargo.toml`).

use std::path::Path;

fn read(rel: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::read_to_string(root.join(rel)).unwrap()
}

/// The first-column names (`` `name` ``) of the table rows in `text`.
fn first_column(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l[3..].split('`').next().unwrap().to_string())
        .collect()
}

#[test]
fn the_book_lists_the_public_modules_and_features() {
    let lib = read("meta-jit/src/lib.rs");
    let mut public: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';').to_string())
        .filter(|m| m != "testing")
        .collect();
    public.sort();
    let internal_block = lib
        .split("internals! {")
        .nth(1)
        .expect("the internals block")
        .split('}')
        .next()
        .unwrap();
    let mut internal: Vec<String> = internal_block
        .lines()
        .map(|l| l.trim().trim_end_matches(';').to_string())
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("//"))
        .collect();
    internal.sort();
    assert!(internal.contains(&"ir".to_string()), "{internal:?}");

    let book = read("book/src/public-api.md");
    let (modules, features) = book.split_once("## Features").unwrap();
    // The features table only, up to the next section.
    let features = features.split("\n## ").next().unwrap();
    let mut listed = first_column(modules);
    listed.sort();
    assert_eq!(
        listed, public,
        "the book's module table against lib.rs's `pub mod`s"
    );
    let internals_row = features
        .lines()
        .find(|l| l.starts_with("| `internals`"))
        .unwrap();
    for m in &internal {
        assert!(
            internals_row.contains(&format!("`{m}`")),
            "the book does not list the internal module `{m}`"
        );
    }

    let manifest = read("meta-jit/Cargo.toml");
    let declared: Vec<String> = manifest
        .split("[features]")
        .nth(1)
        .unwrap()
        .split("\n[")
        .next()
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('='))
        .map(|l| l.split('=').next().unwrap().trim().to_string())
        .filter(|f| f != "default")
        .collect();
    let mut book_features = first_column(features);
    book_features.sort();
    let mut declared = declared;
    declared.sort();
    assert_eq!(book_features, declared);
}

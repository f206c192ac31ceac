//! The JIT log of a Brainfuck run names guest positions with the interpreter's location hook
//! (`bf::location`): every trace header, the merge points inside each listing, aborts and
//! guard reports; guards carry their number in the listings; guard failures are summarized
//! (hottest first) unless every one is asked for (`guard-each`).

use std::process::Command;

/// A program with many loops, bridges and a few hundred guard failures at a low threshold.
const PROGRAM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/programs/primes.bf");

/// Runs the `bf` binary on `PROGRAM` with `METAJIT_LOG=log`; returns standard error.
fn log_of(log: &str) -> String {
    let file = PROGRAM;
    let out = Command::new(env!("CARGO_BIN_EXE_bf"))
        .arg(file)
        .env("METAJIT_LOG", log)
        .env("METAJIT_PARAMS", "threshold=20,trace_eagerness=5")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The JIT changes nothing the program does.
    let plain = Command::new(env!("CARGO_BIN_EXE_bf"))
        .arg("--no-jit")
        .arg(file)
        .output()
        .unwrap();
    assert_eq!(out.stdout, plain.stdout);
    assert!(!out.stdout.is_empty());
    String::from_utf8(out.stderr).unwrap()
}

/// The number after `key` in `line` (`key` then digits).
fn number_after(line: &str, key: &str) -> Option<u64> {
    let rest = &line[line.find(key)? + key.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[test]
fn headers_merge_points_and_guards_name_positions() {
    let log = log_of("trace,opt");
    let headers: Vec<&str> = log.lines().filter(|l| l.starts_with("{jit-log-")).collect();
    assert!(headers.len() >= 4, "{log}");
    // `{jit-log-opt loop 0 of interpret at op 5 '-' in [->>+<<]`: the loop's own position,
    // as `bf::location` renders it.
    let first = headers[0];
    assert!(
        first.starts_with("{jit-log-noopt loop 0 of interpret at op "),
        "{first}"
    );
    assert!(first.contains("' in ["), "{first}");
    assert!(
        headers.iter().any(|h| h.contains("bridge from guard")),
        "no bridge: {headers:?}"
    );
    // Inside each listing: merge points as `# op N ...` lines, guards numbered `id=N`.
    let sections: Vec<&str> = log.split("{jit-log-").skip(1).collect();
    for s in &sections {
        let marks = s.lines().filter(|l| l.starts_with("# op ")).count();
        assert!(marks >= 1, "no position in\n{s}");
        let guards: Vec<&str> = s.lines().filter(|l| l.contains("guard_")).collect();
        assert!(
            guards.iter().all(|g| number_after(g, "id=").is_some()),
            "a guard without its number in\n{s}"
        );
    }
    // A recorded loop has a mark for every merge point it passed: one per guest op of its
    // body at least (`[-]`: `-` and `]`).
    let loop0 = sections[0];
    assert!(
        loop0.lines().filter(|l| l.starts_with("# op ")).count() >= 2,
        "{loop0}"
    );
}

#[test]
fn guard_failures_are_summarized_unless_each_is_asked_for() {
    let summary = log_of("guard,summary");
    let failures = summary
        .lines()
        .find_map(|l| number_after(l, "guard failures: "))
        .expect("the summary line");
    assert!(failures > 10, "{summary}");
    // One line per bridge started, not per failure.
    let lines = summary
        .lines()
        .filter(|l| l.starts_with("[jit-guard]"))
        .count();
    assert!(
        (lines as u64) < failures,
        "{lines} lines for {failures} failures:\n{summary}"
    );
    assert!(summary
        .lines()
        .filter(|l| l.starts_with("[jit-guard]"))
        .all(|l| l.contains("tracing a bridge at op ")));
    // The hottest guards: counts in decreasing order, each with its position.
    let table: Vec<&str> = summary
        .split("{jit-guards")
        .nth(1)
        .expect("the hottest guards")
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("jit-guards}"))
        .filter(|l| l.starts_with("guard "))
        .collect();
    assert!(!table.is_empty(), "{summary}");
    let counts: Vec<u64> = table
        .iter()
        .map(|l| number_after(l, "failed ").unwrap())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{table:?}");
    assert!(table.iter().all(|l| l.contains(" at op ")), "{table:?}");

    let each = log_of("guard-each,summary");
    let lines = each
        .lines()
        .filter(|l| l.starts_with("[jit-guard]"))
        .count();
    let failures = each
        .lines()
        .find_map(|l| number_after(l, "guard failures: "))
        .unwrap();
    assert_eq!(lines as u64, failures, "{each}");
}

#[test]
fn an_unknown_category_lists_the_valid_ones() {
    let log = log_of("summary,trace-opt");
    assert!(
        log.contains("unknown METAJIT_LOG category `trace-opt` (the categories: trace, opt,"),
        "{log}"
    );
}

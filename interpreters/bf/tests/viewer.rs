//! The trace viewer (`METAJIT_LOG=html:FILE`) in a real browser: the `bf` binary writes the
//! page for a run, headless Chromium loads it from the file (no server) and the test reads
//! what the browser rendered: the tree of loops and bridges, the ops by position, the hot
//! guards, and the search box (driven from the address, `#search=...`).
//!
//! Chromium is Debian's `chromium` package; `.ci/run` installs it when missing. Outside CI
//! (`CI` not `true`) without Chromium the browser part is skipped with a loud message; under
//! CI it must run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A program with many loops, bridges and a few hundred guard failures at a low threshold.
const PROGRAM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/programs/primes.bf");

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bf-viewer-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `PROGRAM` with the viewer on; returns the page's path.
fn write_page(dir: &Path) -> PathBuf {
    let src = PROGRAM;
    let page = dir.join("traces.html");
    let out = Command::new(env!("CARGO_BIN_EXE_bf"))
        .arg(src)
        .env("METAJIT_LOG", format!("html:{}", page.display()))
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
        .arg(src)
        .output()
        .unwrap();
    assert_eq!(out.stdout, plain.stdout);
    assert!(!out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[jit-html] interpret: wrote "), "{err}");
    page
}

/// Chromium's command, if installed.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Chromium with the options a headless run as root in a container needs.
fn headless(browser: &str) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
    ]);
    c
}

/// The DOM after the page's script ran, with `fragment` in the address.
fn rendered(browser: &str, page: &Path, fragment: &str) -> String {
    let url = format!("file://{}{fragment}", page.display());
    let out = headless(browser)
        .args(["--virtual-time-budget=2000", "--dump-dom", &url])
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The text of the element with this id (`<span id="count">3 ops match</span>`).
fn text_of<'a>(dom: &'a str, id: &str) -> &'a str {
    let open = format!("id=\"{id}\">");
    let at = dom.find(&open).unwrap_or_else(|| panic!("no #{id}")) + open.len();
    &dom[at..at + dom[at..].find('<').unwrap()]
}

#[test]
fn the_page_is_one_file_with_the_tree_positions_code_and_hot_guards() {
    let page = write_page(&temp_dir());
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: no script, style or image from elsewhere.
    for outside in ["<script src", "<link", "<img", "http://", "https://"] {
        assert!(!html.contains(outside), "the page loads {outside}");
    }
    // The tree: loops with entry counts, bridges under them.
    assert!(html.contains("<nav id=\"tree\">"));
    assert!(html.contains("loop (trace 0), entered "));
    assert!(html.contains("bridge (trace "));
    // Ops by position, before and after optimization, machine code under optimized ops.
    assert!(html.contains("<h3>before optimization</h3>"));
    assert!(html.contains("<h3>after optimization</h3>"));
    assert!(html.contains("<details class=\"group\" open><summary>op "));
    assert!(
        html.contains("&#39; in ["),
        "positions as bf::location renders them"
    );
    assert!(html.contains("<pre class=\"asm\">"));
    // Hot guards highlighted, with their counts.
    assert!(html.contains("class=\"op guard hot\""));
    assert!(html.contains("<ol id=\"hot\">\n<li><a href=\"#guard-"));
}

#[test]
fn chromium_renders_the_page_and_its_search() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but Chromium is not installed: .ci/run installs Debian's `chromium`"
        );
        eprintln!(
            "\n\n*** SKIPPED: the trace viewer's browser test needs Chromium \
             (`apt-get install chromium`); CI runs it. ***\n\n"
        );
        return;
    };
    let dir = temp_dir();
    let page = write_page(&dir);
    let html = std::fs::read_to_string(&page).unwrap();

    // A search keeps the ops that match, counted, and hides the others.
    let dom = rendered(browser, &page, "#search=guard_true");
    let expected = html.matches("<code>guard_true(").count();
    assert!(expected > 0);
    assert_eq!(text_of(&dom, "count"), format!("{expected} ops match"));
    let shown = dom.matches("class=\"op guard match\"").count()
        + dom.matches("class=\"op guard hot match\"").count();
    assert_eq!(shown, expected, "matching ops are marked");
    assert!(dom.contains("hidden=\"\""), "the other ops are hidden");

    // A search that matches nothing hides every trace.
    let dom = rendered(browser, &page, "#search=no-such-op");
    assert_eq!(text_of(&dom, "count"), "0 ops match");
    let sections = dom.matches("<section class=\"trace\"").count();
    assert!(sections > 1);
    let hidden = dom
        .split("<section class=\"trace\" id=\"trace-")
        .skip(1)
        .filter(|s| s.split('>').next().unwrap().ends_with("hidden=\"\""))
        .count();
    assert_eq!(hidden, sections, "every trace is hidden");

    // And it paints: a screenshot is a real PNG of some size.
    let png = dir.join("traces.png");
    let out = headless(browser)
        .arg("--window-size=1200,800")
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 10_000);
}

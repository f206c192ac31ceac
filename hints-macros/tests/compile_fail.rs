//! Every construct the codewriter rejects is a compile error at the user's span with a message
//! that says what to do instead. Regenerate the `.stderr` files with `TRYBUILD=overwrite`.

#[test]
fn unsupported_constructs() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}

//! `fuzz_dump CONFORMANCE_DIR OUTDIR SEED CASES`: writes the inputs of the lexer and parser
//! fuzz test (`tests/no_panic.rs`) as `OUTDIR/batch_B.in` and its driver as `OUTDIR/driver.lua`,
//! for `regen-fuzz-expected.sh`. Built by that script with plain rustc.

#[path = "../tests/fuzz/mod.rs"]
mod fuzz;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 5 {
        eprintln!("usage: fuzz_dump CONFORMANCE_DIR OUTDIR SEED CASES");
        std::process::exit(2);
    }
    let corpus = fuzz::corpus(std::path::Path::new(&a[1]));
    let out = std::path::Path::new(&a[2]);
    let seed: u64 = a[3].parse().expect("SEED");
    let cases: usize = a[4].parse().expect("CASES");
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(out.join("driver.lua"), fuzz::DRIVER).unwrap();
    for b in 0..cases.div_ceil(fuzz::PER_PROCESS) as u64 {
        let (input, _) = fuzz::batch(seed, b, cases, &corpus);
        std::fs::write(out.join(format!("batch_{b}.in")), input).unwrap();
    }
}

//! `gen_dump OUTDIR FIRST_SEED UNITS BATCH`: writes the programs the random-program test
//! would run (`OUTDIR/gen_SEED.lua`, BATCH units each, unit seeds FIRST_SEED..), so that
//! `check-generator.sh` can run them in PUC Lua. Built by that script with plain rustc.

#[path = "../tests/gen/mod.rs"]
mod gen;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 5 {
        eprintln!("usage: gen_dump OUTDIR FIRST_SEED UNITS BATCH");
        std::process::exit(2);
    }
    let dir = std::path::Path::new(&a[1]);
    let first: u64 = a[2].parse().expect("FIRST_SEED");
    let units: u64 = a[3].parse().expect("UNITS");
    let batch: u64 = a[4].parse::<u64>().expect("BATCH").max(1);
    std::fs::create_dir_all(dir).unwrap();
    let mut s = first;
    while s < first + units {
        let seeds: Vec<u64> = (s..(s + batch).min(first + units)).collect();
        std::fs::write(dir.join(format!("gen_{s}.lua")), gen::program(&seeds)).unwrap();
        s += batch;
    }
}

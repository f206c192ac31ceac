//! Tests of the generator (its traces verify, run, and cover what the optimizer needs) and of
//! the comparison (it tells equal results from different ones, deeply).

use super::features::Features;
use super::*;
use crate::interp::Outcome;
use crate::ir::parse::parse_with;
use crate::ir::Value;

/// Over 1000 generated traces, every feature the optimizer's tests need appears, and not
/// just once or twice.
#[test]
fn generator_covers_the_features() {
    let n = 1000;
    let mut counts: hashbrown::HashMap<&str, usize> = hashbrown::HashMap::new();
    let mut failed_guards = 0;
    let mut finished = 0;
    let mut iterated = 0;
    let mut fresh_escaping_on_guard_failure = 0;
    for seed in 0..n {
        let case = Case::random(seed, 40);
        let built = case.build();
        let f = Features::of(&built.trace);
        let mut count = |name, present: bool| *counts.entry(name).or_default() += present as usize;
        count("repeated_pure", f.repeated_pure);
        count("repeated_elidable_call", f.repeated_elidable_call);
        count("known_result_after_call", f.known_result_after_call);
        count("exact_value", f.exact_value);
        count("load_after_store", f.load_after_store);
        count("load_after_load", f.load_after_load);
        count("overwritten_store", f.overwritten_store);
        count("nonescaping_new", f.nonescaping_new);
        count("escaping_new", f.escaping_new);
        count("new_in_resume", f.new_in_resume);
        count("new_array", f.new_array);
        count("is_loop", f.is_loop);
        count("label", f.label);
        count("residual_with_effects", f.residual_with_effects);
        count("guard_on_constant", f.guard_on_constant);
        count("repeated_guard", f.repeated_guard);
        count("ovf", f.ovf);
        count("same_as", f.same_as);
        count("self_operands", f.self_operands);
        count("constant_operands", f.constant_operands);
        count("multi_frame_resume", f.multi_frame_resume);
        count("float_op", f.float_op);
        let _t = crate::alloc::Tracker::new();
        match built
            .run(&built.trace)
            .expect("generated traces run")
            .outcome
        {
            Outcome::GuardFailed { op, .. } => {
                failed_guards += 1;
                let r = built.trace.ops[op].resume.as_ref().unwrap();
                fresh_escaping_on_guard_failure += r
                    .values
                    .iter()
                    .any(|v| v.is_op() && built.trace.op(*v).opcode == crate::ir::Opcode::New)
                    as usize;
            }
            Outcome::Finish(_) => finished += 1,
            Outcome::Iterations(_) => iterated += 1,
            Outcome::Jump { .. } => panic!("generated traces do not jump to other traces"),
        }
    }
    let mut report: Vec<_> = counts.iter().collect();
    report.sort();
    eprintln!("features over {n} traces: {report:?}");
    eprintln!(
        "outcomes: {failed_guards} guard failures ({fresh_escaping_on_guard_failure} capturing \
         a new object), {finished} finishes, {iterated} loops run out"
    );
    for (name, c) in &counts {
        assert!(*c >= n as usize / 20, "only {c} of {n} traces have {name}");
    }
    for (name, c) in [
        ("guard failures", failed_guards),
        ("finishes", finished),
        ("loops that run out", iterated),
    ] {
        assert!(c >= n as usize / 10, "only {c} of {n} runs end in {name}");
    }
    assert!(fresh_escaping_on_guard_failure > 0);
}

/// Guards made to pass do pass in the simulated pass: straight traces with no failing guard
/// requested reach `finish` (unless the run is invalidated).
#[test]
fn guards_pass_unless_asked_to_fail() {
    let mut checked = 0;
    for seed in 0..500 {
        let mut case = Case::random(seed, 30);
        case.shape = Shape::Straight;
        case.invalidated = false;
        for s in &mut case.steps {
            // Item steps use `fail` to choose a store; bounds guards still pass or fail by
            // their index.
            if s.kind != recipe::Kind::Item {
                s.fail = false;
            }
        }
        let built = case.build();
        let _t = crate::alloc::Tracker::new();
        let out = built.run(&built.trace).unwrap().outcome;
        if let Outcome::GuardFailed { op, .. } = out {
            // Only a bounds check may fail: its index comes from the data.
            let g = &built.trace.ops[op];
            let cond = built.trace.op(g.args[0]);
            assert_eq!(
                cond.opcode,
                crate::ir::Opcode::UintLt,
                "guard {op} failed:\n{}",
                crate::ir::print::print(&built.trace)
            );
        } else {
            checked += 1;
        }
    }
    assert!(checked > 300);
}

/// The same case builds the same trace text (up to heap addresses, which are inputs).
#[test]
fn building_is_deterministic() {
    for seed in 0..50 {
        let case = Case::random(seed, 30);
        let (a, b) = (case.build(), case.build());
        assert_eq!(a.trace.ops, b.trace.ops);
        assert_eq!(a.trace.descrs, b.trace.descrs);
    }
}

/// Shrinking proposes only cases that build, and they are smaller.
#[test]
fn shrinking_proposes_buildable_cases() {
    let case = Case::random(3, 30);
    let candidates = case.simpler();
    assert!(candidates.len() > 30);
    for c in candidates.iter().take(200) {
        let _ = c.build();
        assert!(c.steps.len() <= case.steps.len());
    }
}

/// Runs a trace text on a heap of its own (kept alive: the comparison reads it).
fn run_text(text: &str) -> (crate::ir::Trace, Observation, heap::Heap) {
    let trace = parse_with(text, &env()).unwrap();
    let case = Case::random(0, 0);
    let heap = heap::Heap::new(&case.heap);
    let outcome = crate::interp::run(&trace, &[Value::Ref(heap.obj(0))]).unwrap();
    let obs = Observation {
        outcome,
        heap: heap.snapshot(),
    };
    (trace, obs, heap)
}

const DESCRS: &str = "\
descr a64 = field(offset=16, size=8, kind=i, signed)
descr next = field(offset=40, size=8, kind=p)
descr obj = size(size=56, align=8)
";

fn compare_texts(a: &str, b: &str) -> Result<(), String> {
    let t = crate::alloc::Tracker::new();
    let (ta, oa, _ha) = run_text(&format!("{DESCRS}{a}"));
    let (tb, ob, _hb) = run_text(&format!("{DESCRS}{b}"));
    compare(
        RunResult {
            trace: &ta,
            outcome: &oa.outcome,
            heap: &oa.heap,
        },
        RunResult {
            trace: &tb,
            outcome: &ob.outcome,
            heap: &ob.heap,
        },
        &t,
    )
}

#[test]
fn fresh_objects_compare_by_content() {
    let mk = |v: i64| {
        format!("[p0]\np1 = new(descr=obj)\nsetfield(p1, {v}, descr=a64)\nfinish(p1, p0)\n")
    };
    compare_texts(&mk(5), &mk(5)).unwrap();
    let e = compare_texts(&mk(5), &mk(6)).unwrap_err();
    assert!(e.contains("finish, value 0"), "{e}");
    // A heap object is not a fresh one, even with the same content.
    let e = compare_texts(&mk(5), "[p0]\nfinish(p0, p0)\n").unwrap_err();
    assert!(e.contains("value 0"), "{e}");
}

#[test]
fn aliasing_must_agree() {
    let shared = "[p0]\np1 = new(descr=obj)\nfinish(p1, p1)\n";
    let distinct = "[p0]\np1 = new(descr=obj)\np2 = new(descr=obj)\nfinish(p1, p2)\n";
    compare_texts(shared, shared).unwrap();
    assert!(compare_texts(shared, distinct).is_err());
}

#[test]
fn heap_contents_compare_deeply() {
    // Both store a fresh object into the heap: equal by content.
    let store = |v: i64| {
        format!(
            "[p0]\np1 = new(descr=obj)\nsetfield(p1, {v}, descr=a64)\n\
             setfield(p0, p1, descr=next)\nfinish()\n"
        )
    };
    compare_texts(&store(1), &store(1)).unwrap();
    let e = compare_texts(&store(1), &store(2)).unwrap_err();
    assert!(e.contains("heap root 0 +40 -> object +16"), "{e}");
    let e = compare_texts(&store(1), "[p0]\nsetfield(p0, 3, descr=a64)\nfinish()\n").unwrap_err();
    assert!(e.contains("heap root 0"), "{e}");
}

#[test]
fn guard_values_are_materialized() {
    // A guard holding a real object equals one describing it as a virtual.
    let real = "[p0]\np1 = new(descr=obj)\nsetfield(p1, 7, descr=a64)\n\
                setfield(p1, p0, descr=next)\nguard_true(0) [p1, 3]\nfinish()\n";
    let virt = "[p0]\nguard_true(0) [v0, 3] {v0 = obj(a64=7, next=p0)}\nfinish()\n";
    let virt8 = "[p0]\nguard_true(0) [v0, 3] {v0 = obj(a64=8, next=p0)}\nfinish()\n";
    compare_texts(real, virt).unwrap();
    let e = compare_texts(real, virt8).unwrap_err();
    assert!(e.contains("guard 0"), "{e}");
    let other =
        "[p0]\nguard_true(1) []\nguard_true(0) [v0, 3] {v0 = obj(a64=7, next=p0)}\nfinish()\n";
    assert!(compare_texts(real, other)
        .unwrap_err()
        .contains("guard 0 failed vs guard 1"));
}

#[test]
fn generated_traces_round_trip() {
    for seed in 0..200 {
        let built = Case::random(seed, 40).build();
        check_round_trip(&built.trace).unwrap();
    }
}

#[test]
fn check_optimized_passes_on_identity() {
    for seed in 0..100 {
        check_optimized(&Case::random(seed, 40), &crate::opt::Options::none()).unwrap();
    }
}

/// A run stops before a load, store or call argument outside the heap it may touch, and
/// names the op; the same op behind a guard that always fails is never reached, so the trace
/// runs (seed 1100 of the full-pipeline property: the optimizer may assume a failing guard's
/// condition, here that an object's address is 0, in the code after it).
#[test]
fn accesses_outside_the_heap_stop_the_run() {
    let case = Case::random(0, 0);
    let built = case.build();
    let heap = &built.heap;
    let run = |text: &str| {
        let t = parse_with(&format!("{DESCRS}{text}"), &env()).unwrap();
        built.run.run(&t, &[Value::Ref(heap.obj(0))])
    };
    let ok = format!(
        "[p0]\ni1 = getfield_i(ConstPtr({:#x}), descr=a64)\nfinish(i1)\n",
        heap.obj(0)
    );
    assert!(matches!(run(&ok), Ok(Outcome::Finish(_))));
    let bad = "[p0]\ni1 = getfield_i(ConstPtr(0xc0), descr=a64)\nfinish(i1)\n";
    let e = run(bad).unwrap_err();
    assert!(e.0.contains("op 1 (getfield_i) would touch 0xd0"), "{e:?}");
    let call = "descr imm_of_d = call(args=p, ret=i, reads=*, writes=none, elidable)\n\
                [p0]\ni1 = call_pure_i(ConstFn(imm_of), ConstPtr(0x8), descr=imm_of_d)\nfinish(i1)\n";
    assert!(run(call).is_err());
    let unreachable = "[p0]\ni1 = cast_ptr_to_int(p0)\nguard_false(i1) []\n\
                       setfield(ConstPtr(0x0), 0, descr=a64)\nfinish(i1)\n";
    assert!(matches!(run(unreachable), Ok(Outcome::GuardFailed { .. })));
}

/// What allocation removal makes of the generated traces: over 1000 of them, optimized with
/// every stage, guards whose resume data holds virtual objects, virtuals nested in virtuals,
/// virtual arrays, and peeled loops that carry a virtual across their label all appear. The
/// properties (optimizer, backend, bridges) run on these traces, so they check all of them.
#[test]
fn optimized_traces_have_nested_virtuals_and_virtual_arrays() {
    use crate::ir::DescrKind;
    let n = 1000;
    let (mut in_resume, mut nested, mut arrays, mut carried) = (0, 0, 0, 0);
    for seed in 0..n {
        let built = Case::random(seed, 40).build();
        let (opt, report) =
            crate::opt::optimize_with_report(&built.trace, &crate::opt::Options::all());
        let (mut r, mut ne, mut ar) = (false, false, false);
        for op in &opt.ops {
            let Some(res) = &op.resume else { continue };
            r |= !res.virtuals.is_empty();
            for v in &res.virtuals {
                ne |= v.fields.iter().any(|f| f.1.is_virtual());
                ar |= matches!(opt.get_descr(v.descr).kind, DescrKind::Array(_));
            }
        }
        in_resume += r as usize;
        nested += ne as usize;
        arrays += ar as usize;
        carried += report
            .peeled
            .is_some_and(|p| p.carried_virtual.iter().any(|w| w.is_some()))
            as usize;
    }
    eprintln!(
        "of {n} optimized traces: {in_resume} with virtuals in resume data, {nested} nested, \
         {arrays} virtual arrays, {carried} loops carrying a virtual across the label"
    );
    for (what, c) in [
        ("virtuals in resume data", in_resume),
        ("nested virtuals", nested),
        ("virtual arrays", arrays),
        ("virtuals carried across a label", carried),
    ] {
        assert!(
            c >= n as usize / 50,
            "only {c} of {n} optimized traces have {what}"
        );
    }
}

/// The random traces exercise the virtualizable pass ([`crate::opt::vable`]): over 1000
/// generated traces, optimized, some guards carry pending stores and some loops keep stores
/// pending across their back edge, so the random properties check both.
#[test]
fn generator_covers_virtualizable_stores() {
    let n = 1000;
    let (mut in_guards, mut in_loops) = (0u64, 0u64);
    for seed in 0..n {
        let built = Case::random(seed, 40).build();
        let opt = crate::opt::optimize(&built.trace, &crate::opt::Options::all());
        in_guards += opt
            .ops
            .iter()
            .any(|op| op.resume.as_ref().is_some_and(|r| !r.stores.is_empty()))
            as u64;
        in_loops += !opt.loop_stores.is_empty() as u64;
    }
    eprintln!(
        "of {n} optimized traces, {in_guards} delay stores past guards, {in_loops} across loops"
    );
    assert!(in_guards >= n / 20, "only {in_guards} of {n}");
    assert!(in_loops >= n / 50, "only {in_loops} of {n}");
}

/// The generator addresses memory as `b + ((v + c) << 3)` too (the way a register window's
/// slots are addressed), and optimized, those become one base at known displacements
/// (`(b + (v << 3)) + c'`), which the heap stage tells apart: the random properties check
/// the fold stage's reassociation and the heap stage's integer roots.
#[test]
fn generator_covers_addresses_from_an_integer_base() {
    use crate::ir::{Opcode, Trace};
    let n = 1000;
    // Whether a `cast_int_to_ptr` of `x + c` has `x` computed by `producer` from a shift.
    let scaled = |t: &Trace, outer_is_shift: bool| {
        let prod = |r: crate::ir::OpRef| r.is_op().then(|| &t.ops[r.index()]);
        t.ops.iter().any(|op| {
            op.opcode == Opcode::CastIntToPtr
                && prod(op.args[0]).is_some_and(|add| {
                    add.opcode == Opcode::IntAdd
                        && add.args.iter().any(|&a| {
                            prod(a).is_some_and(|p| match outer_is_shift {
                                true => p.opcode == Opcode::IntLshift,
                                false => {
                                    p.opcode == Opcode::IntAdd
                                        && p.args.iter().any(|&s| {
                                            prod(s).is_some_and(|s| s.opcode == Opcode::IntLshift)
                                        })
                                }
                            })
                        })
                })
        })
    };
    let (mut built_n, mut opt_n) = (0u64, 0u64);
    for seed in 0..n {
        let built = Case::random(seed, 40).build();
        built_n += scaled(&built.trace, true) as u64;
        let opt = crate::opt::optimize(&built.trace, &crate::opt::Options::all());
        opt_n += scaled(&opt, false) as u64;
    }
    eprintln!("of {n} traces, {built_n} address by a scaled index, {opt_n} optimized to a base");
    assert!(built_n >= n / 20, "only {built_n} of {n}");
    assert!(opt_n >= n / 40, "only {opt_n} of {n}");
}

#[test]
fn generator_covers_one_memory_under_related_alias_classes() {
    use crate::ir::Trace;
    // Whether a trace reaches memory through descriptors of both groups of names.
    let both = |t: &Trace, a: &[&str], b: &[&str]| {
        let used = |names: &[&str]| {
            t.ops.iter().any(|op| {
                op.descr
                    .is_some_and(|d| names.contains(&t.get_descr(d).name.as_str()))
            })
        };
        used(a) && used(b)
    };
    let n = 1000;
    let (mut items, mut payloads) = (0u64, 0u64);
    for seed in 0..n {
        let t = Case::random(seed, 40).build().trace;
        items += both(&t, &["arr"], &["any_items"]) as u64;
        payloads += both(&t, &["pi", "pf"], &["pu", "pv"]) as u64;
    }
    eprintln!("of {n} traces, {items} use a Vec field's items and an unseen Vec's, {payloads} one payload at a place and unseen");
    assert!(items >= n / 20, "only {items} of {n}");
    assert!(payloads >= n / 20, "only {payloads} of {n}");
}

//! Address folding (`backend::x64::addr`): a load or store of `cast_int_to_ptr(x + c)` is one
//! instruction addressing `[x + c + offset]`, and the addition and the cast emit nothing. The
//! shape, counted in instructions, and the outcomes against the reference interpreter on a
//! real buffer.

use meta_jit::backend::check::Compiled;
use meta_jit::backend::{Backend, CompileOptions};
use meta_jit::ir::{parse::parse, Value};

/// Two slots of a register window: slot `i + 1` is read, slot `i + 2` written.
const WINDOW: &str = "descr x = field(offset=8, size=8, kind=i, signed)
[p0, i1]
i2 = cast_ptr_to_int(p0)
i3 = int_lshift(i1, 4)
i4 = int_add(i2, i3)
i5 = int_add(i4, 16)
p6 = cast_int_to_ptr(i5)
i7 = getfield_i(p6, descr=x)
i8 = int_add(i4, 32)
p9 = cast_int_to_ptr(i8)
i10 = int_add(i7, 5)
setfield(p9, i10, descr=x)
finish(i10)";

#[test]
fn a_slot_of_a_window_is_one_instruction_from_its_base() {
    let t = parse(WINDOW).unwrap();
    let mut b = Backend::new();
    let id = b.compile(&t, &CompileOptions::default()).unwrap();
    // Ops are numbered from the inputs: p0 and i1 are 0 and 1, i2 is 2.
    for (op, what) in [(5, "i5"), (6, "p6"), (8, "i8"), (9, "p9")] {
        assert!(
            b.op_code(id, op).is_empty(),
            "{what}: {:?}",
            b.op_code(id, op)
        );
    }
    let load = b.op_code(id, 7);
    assert_eq!(load.len(), 1, "{load:?}");
    assert!(
        load[0].starts_with("mov ") && load[0].ends_with("+18h]"),
        "{load:?}"
    );
    let store = b.op_code(id, 11);
    assert_eq!(store.len(), 1, "{store:?}");
    assert!(store[0].contains("+28h]"), "{store:?}");
}

#[test]
fn folded_addresses_agree_with_the_interpreter() {
    let mut words = vec![0i64; 64];
    for (k, w) in words.iter_mut().enumerate() {
        *w = 100 * k as i64;
    }
    let c = Compiled::new(parse(WINDOW).unwrap());
    let p = Value::Ref(words.as_mut_ptr() as usize);
    for i in 0..28 {
        c.check(&[p, Value::Int(i)]);
    }
    // The last runs (`i` = 27) read slot 28's field (word 57) and wrote it plus 5 into slot
    // 29's (word 59).
    assert_eq!(words[2 * 29 + 1], words[2 * 28 + 1] + 5);
    assert_ne!(words[2 * 29 + 1], 100 * (2 * 29 + 1));
}

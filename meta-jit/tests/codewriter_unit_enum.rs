//! Fieldless `Copy` enums are scalars: bound to variables, compared, matched from registers.

use meta_jit::hints::*;

#[derive(Clone, Copy, Debug, PartialEq, JitLayout)]
#[repr(u8)]
#[jit(scalar)]
pub enum Opcode {
    Inc = 1,
    Dec,
    Double = 10,
    Halt,
}

#[derive(JitLayout)]
pub struct Program {
    pub ops: Vec<Opcode>,
}

#[look_inside]
fn is_halt(op: Opcode) -> bool {
    op == Opcode::Halt
}

#[unroll_safe]
fn eval(p: &Program, start: i64) -> i64 {
    let mut acc = start;
    let mut pc = 0;
    while pc < p.ops.len() {
        let op = p.ops[pc];
        if is_halt(op) {
            break;
        }
        acc = match op {
            Opcode::Inc => acc + 1,
            Opcode::Dec => acc - 1,
            Opcode::Double => acc * 2,
            Opcode::Halt => acc,
        };
        pc += 1;
    }
    acc
}

#[test]
fn fieldless_enums_in_registers() {
    use Opcode::*;
    let p = Program {
        ops: vec![Inc, Double, Double, Dec, Halt, Inc],
    };
    assert_eq!(eval(&p, 5), 23);
    assert_eq!(eval::run_jitcode(&p, 5), 23);
    assert!(is_halt::run_jitcode(Halt));
    assert!(!is_halt::run_jitcode(Double));
    let text = eval::jitcode().to_string();
    assert!(text.contains("switch"), "{text}");
    assert!(
        text.contains("10: "),
        "the explicit discriminant is the switch key: {text}"
    );
}

use meta_jit::hints::*;

// Not `Copy`: a store into memory would skip its drop glue (here a `Drop` impl).
#[derive(JitLayout)]
#[repr(C, u8)]
pub enum Slot {
    Int(i64),
    Nil,
}

impl Drop for Slot {
    fn drop(&mut self) {}
}

#[derive(JitLayout)]
pub struct Vm {
    pub regs: Vec<Slot>,
}

#[look_inside]
fn set(vm: &mut Vm, x: i64) {
    vm.regs[0] = Slot::Int(x);
}

fn main() {}

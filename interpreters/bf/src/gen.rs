//! Random Brainfuck programs that always end (for differential tests of the interpreter, its
//! jitcode and, with the JIT, compiled code).
//!
//! A program is a tree of [`Item`]s rendered to source with the pointer tracked statically:
//! the pointer stays within cells `0..CELLS`, every loop body returns to the loop's cell and
//! ends with `-`, and nothing inside a loop changes the cell of that loop or of any loop around
//! it. So each loop runs at most 255 times, and with loops nested at most [`MAX_DEPTH`] deep,
//! every program ends within a bounded number of steps.

use quickcheck::{Arbitrary, Gen};

/// `loops` loops, each run 2,000 times (past the default threshold) with a body of `pairs` `>+`
/// pairs and as many `<`: an outer loop of 10 turns around an inner one of 200, whose body
/// walks right and back; the next loop starts on a fresh cell. Its traces are long (about 16
/// ops and 2 guards a pair once optimized), which the memory test and the compile-cost example
/// measure.
pub fn long_loops(loops: usize, pairs: usize) -> String {
    let mut src = String::new();
    for _ in 0..loops {
        src.push_str("++++++++++[>");
        src.push_str(&"+".repeat(200));
        src.push_str(&format!(
            "[{}{}-]<-]>>",
            ">+".repeat(pairs),
            "<".repeat(pairs)
        ));
    }
    src
}

/// How many cells a generated program uses.
pub const CELLS: i64 = 12;
/// How deep loops nest.
pub const MAX_DEPTH: usize = 2;

/// One piece of a generated program.
#[derive(Clone, Debug)]
pub enum Item {
    /// `+` repeated (wrapping, so 255 is `-`).
    Add(u8),
    /// Move the pointer by this much (clamped to the cells).
    Seek(i8),
    /// `.`
    Out,
    /// `,`
    In,
    /// A loop with this body.
    Bracket(Vec<Item>),
}

/// A generated program and the input it reads.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The program's items.
    pub items: Vec<Item>,
    /// Its input.
    pub input: Vec<u8>,
}

impl Generated {
    /// The program's source.
    pub fn source(&self) -> String {
        let mut out = String::new();
        let mut pos = 0;
        render(&self.items, &mut pos, &mut Vec::new(), &mut out);
        out
    }
}

fn render(items: &[Item], pos: &mut i64, bases: &mut Vec<i64>, out: &mut String) {
    for item in items {
        match item {
            Item::Add(n) if !bases.contains(pos) => {
                let n = *n as i32;
                if n <= 128 {
                    out.push_str(&"+".repeat(n as usize));
                } else {
                    out.push_str(&"-".repeat(256 - n as usize));
                }
            }
            Item::In if !bases.contains(pos) => out.push(','),
            Item::Add(_) | Item::In => {}
            Item::Out => out.push('.'),
            Item::Seek(d) => {
                let to = (*pos + *d as i64).clamp(0, CELLS - 1);
                move_to(pos, to, out);
            }
            Item::Bracket(body) => {
                // A loop on the cell of an enclosing loop would change that loop's counter.
                if bases.len() >= MAX_DEPTH || bases.contains(pos) {
                    continue;
                }
                let base = *pos;
                out.push('[');
                bases.push(base);
                render(body, pos, bases, out);
                move_to(pos, base, out);
                bases.pop();
                out.push_str("-]");
            }
        }
    }
}

fn move_to(pos: &mut i64, to: i64, out: &mut String) {
    let c = if to > *pos { '>' } else { '<' };
    out.push_str(&c.to_string().repeat((to - *pos).unsigned_abs() as usize));
    *pos = to;
}

fn gen_items(g: &mut Gen, depth: usize) -> Vec<Item> {
    let n = usize::arbitrary(g) % if depth == 0 { 24 } else { 8 };
    (0..n)
        .map(|_| match u8::arbitrary(g) % 10 {
            0..=2 => Item::Add(u8::arbitrary(g)),
            3..=5 => Item::Seek(i8::arbitrary(g) % 4),
            6 => Item::Out,
            7 => Item::In,
            _ if depth < MAX_DEPTH => Item::Bracket(gen_items(g, depth + 1)),
            _ => Item::Out,
        })
        .collect()
}

impl Arbitrary for Generated {
    fn arbitrary(g: &mut Gen) -> Generated {
        let len = usize::arbitrary(g) % 8;
        Generated {
            items: gen_items(g, 0),
            input: (0..len).map(|_| u8::arbitrary(g)).collect(),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Generated>> {
        let input = self.input.clone();
        let mut smaller: Vec<Generated> = shrink_items(&self.items)
            .into_iter()
            .map(|items| Generated {
                items,
                input: input.clone(),
            })
            .collect();
        if !self.input.is_empty() {
            smaller.push(Generated {
                items: self.items.clone(),
                input: vec![],
            });
        }
        Box::new(smaller.into_iter())
    }
}

/// Smaller versions of a list of items: one item removed, a loop replaced by its body, or one
/// loop's body shrunk.
fn shrink_items(items: &[Item]) -> Vec<Vec<Item>> {
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut v = items.to_vec();
        v.remove(i);
        out.push(v);
        if let Item::Bracket(body) = &items[i] {
            let mut v = items.to_vec();
            v.splice(i..=i, body.iter().cloned());
            out.push(v);
            for b in shrink_items(body) {
                let mut v = items.to_vec();
                v[i] = Item::Bracket(b);
                out.push(v);
            }
        }
    }
    out
}

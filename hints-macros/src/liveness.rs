//! The merge-point rule where the macro can see it: a variable of the portal, declared before
//! its dispatch loop, that the loop body reads after `jit_merge_point!()` before any plain
//! assignment to it is live at the merge point (the next iteration reads the value the last one
//! left), so it must be a green or a red. That is a compile error at the read. The jitcode
//! builder checks the exact rule at run time (with register liveness) and names the variable and
//! the merge point for the cases this syntactic check does not see (a variable read only after
//! the loop, a read inside a macro's arguments, a variable shadowed in a `match` arm).

use proc_macro2::Span;
use syn::visit::Visit;
use syn::{Block, Expr, Ident, Pat, Stmt};

/// Whether `s` is the `jit_merge_point!()` statement.
pub(crate) fn is_merge_point(s: &Stmt) -> bool {
    let mac = match s {
        Stmt::Macro(m) => &m.mac,
        Stmt::Expr(Expr::Macro(m), _) => &m.mac,
        _ => return false,
    };
    mac.path
        .segments
        .last()
        .is_some_and(|p| p.ident == "jit_merge_point")
}

/// The names a pattern binds.
fn bound(p: &Pat, out: &mut Vec<Ident>) {
    struct B<'a>(&'a mut Vec<Ident>);
    impl<'ast> Visit<'ast> for B<'_> {
        fn visit_pat_ident(&mut self, i: &'ast syn::PatIdent) {
            self.0.push(i.ident.clone());
            syn::visit::visit_pat_ident(self, i);
        }
    }
    B(out).visit_pat(p);
}

/// The loop body (statements after the merge point) of the dispatch loop among `stmts`, and
/// the names bound by `let` before that loop.
fn dispatch_loop(stmts: &[Stmt]) -> Option<(&[Stmt], Vec<Ident>)> {
    let mut before = Vec::new();
    for s in stmts {
        let body: Option<&Block> = match s {
            Stmt::Expr(Expr::Loop(l), _) => Some(&l.body),
            Stmt::Expr(Expr::While(w), _) => Some(&w.body),
            _ => None,
        };
        if let Some(b) = body {
            if let Some(i) = b.stmts.iter().position(is_merge_point) {
                return Some((&b.stmts[i + 1..], before));
            }
        }
        if let Stmt::Local(l) = s {
            bound(&l.pat, &mut before);
        }
    }
    None
}

enum First {
    Read(Span),
    Written,
}

/// Finds the first mention of `name` in source order.
struct Finder<'a> {
    name: &'a Ident,
    first: Option<First>,
}

impl Finder<'_> {
    fn is_name(&self, e: &Expr) -> bool {
        matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(self.name))
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        if self.first.is_some() {
            return;
        }
        match e {
            Expr::Assign(a) if self.is_name(&a.left) => {
                self.visit_expr(&a.right);
                if self.first.is_none() {
                    self.first = Some(First::Written);
                }
            }
            Expr::Path(_) if self.is_name(e) => self.first = Some(First::Read(e_span(e))),
            Expr::Closure(_) | Expr::Macro(_) => {}
            _ => syn::visit::visit_expr(self, e),
        }
    }
    fn visit_local(&mut self, l: &'ast syn::Local) {
        if self.first.is_some() {
            return;
        }
        if let Some(init) = &l.init {
            self.visit_expr(&init.expr);
            if let Some((_, d)) = &init.diverge {
                self.visit_expr(d);
            }
        }
        let mut names = Vec::new();
        bound(&l.pat, &mut names);
        if self.first.is_none() && names.contains(self.name) {
            // Shadowed: the outer variable is not read after this.
            self.first = Some(First::Written);
        }
    }
    fn visit_arm(&mut self, a: &'ast syn::Arm) {
        let mut names = Vec::new();
        bound(&a.pat, &mut names);
        if names.contains(self.name) {
            // Shadowed in this arm only: look at the guard and body no further.
            return;
        }
        syn::visit::visit_arm(self, a);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

fn e_span(e: &Expr) -> Span {
    syn::spanned::Spanned::span(e)
}

/// The compile errors of the rule for a portal with these parameters, body, greens and reds.
pub fn check(params: &[Ident], body: &Block, greens: &[Ident], reds: &[Ident]) -> Vec<syn::Error> {
    let Some((after, lets)) = dispatch_loop(&body.stmts) else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    let mut seen: Vec<&Ident> = Vec::new();
    for name in params.iter().chain(&lets) {
        if greens.contains(name) || reds.contains(name) || seen.contains(&name) {
            continue;
        }
        seen.push(name);
        let mut f = Finder { name, first: None };
        for s in after {
            f.visit_stmt(s);
            if f.first.is_some() {
                break;
            }
        }
        if let Some(First::Read(span)) = f.first {
            errors.push(syn::Error::new(
                span,
                format!(
                    "variable `{name}` is live at `jit_merge_point!()` but is neither a green nor a red: the dispatch loop reads it here before assigning it, so the next iteration needs the value the last one left; add it to `greens(...)` (if it is part of the guest program's position) or `reds(...)` in `#[jit::interpreter(...)]`"
                ),
            ));
        }
    }
    errors
}

//! The trace viewer (`METAJIT_LOG=html:FILE`): one self-contained HTML page, written when the
//! driver goes away, that needs no server and no network. It shows
//!
//! - the loops and their bridges as a tree, with how many times the interpreter entered each
//!   loop and how many times the guards of each trace failed;
//! - each trace's ops grouped by guest position, before and after optimization, with the
//!   machine code of each optimized op folded under it (`<details>`);
//! - the hottest guards highlighted, with their failure counts;
//! - a search box that keeps only the ops whose text contains what is typed (also from the
//!   address: `page.html#search=call_n`).
//!
//! The driver records each compiled trace as text when it compiles it ([`TraceView`]), while
//! the objects its greens reference are live; counts are added when the page is written.
//!
//! Owns: the page. Must not know: how traces are made or compiled, or any guest language.

use hashbrown::HashMap;
use std::fmt::Write;

use crate::ir::Trace;
use crate::log::GuardCount;
use crate::warm::{Stats, TraceKind};

/// How many of the guards that failed most are highlighted as hot.
pub const HOT_GUARDS: usize = 10;

/// One op as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct OpView {
    /// Its line in the IR listing.
    pub text: String,
    /// Its guard number, for a guard.
    pub guard: Option<u32>,
    /// Its machine code, one instruction a line (optimized ops only).
    pub code: Vec<String>,
}

/// The ops that come from one guest position.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// The position, as the location hook renders it.
    pub position: String,
    /// The ops.
    pub ops: Vec<OpView>,
}

/// One compiled trace, as text.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceView {
    /// The compiled trace's number.
    pub id: u32,
    /// Loop or bridge.
    pub kind: TraceKind,
    /// For a bridge: the trace and guard number it is attached to.
    pub parent: Option<(u32, u32)>,
    /// The log's header for it (`loop 0 of interpret at ...`).
    pub header: String,
    /// The ops as recorded, by position.
    pub before: Vec<Group>,
    /// The ops as optimized, by position, with machine code.
    pub after: Vec<Group>,
}

impl TraceView {
    /// The view of trace `id`: `recorded` and `opt` with their marks (`(op index, text)` as in
    /// `ir::print::listing`); `code(i)` is the machine code of op `i` of `opt`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: u32,
        kind: TraceKind,
        parent: Option<(u32, u32)>,
        header: &str,
        recorded: &Trace,
        recorded_marks: &[(usize, String)],
        opt: &Trace,
        opt_marks: &[(usize, String)],
        code: impl Fn(usize) -> Vec<String>,
    ) -> TraceView {
        TraceView {
            id,
            kind,
            parent,
            header: header.to_string(),
            before: groups(recorded, recorded_marks, |_| Vec::new()),
            after: groups(opt, opt_marks, code),
        }
    }
}

fn groups(t: &Trace, marks: &[(usize, String)], code: impl Fn(usize) -> Vec<String>) -> Vec<Group> {
    let names = crate::ir::print::Names::new(t);
    let mut out = vec![Group {
        position: "(inputs)".to_string(),
        ops: vec![OpView {
            text: {
                let i: Vec<String> = t.inputs().map(|r| names.value(t, r)).collect();
                format!("[{}]", i.join(", "))
            },
            guard: None,
            code: Vec::new(),
        }],
    }];
    let mut marks = marks.iter().peekable();
    for i in t.num_inputs()..t.ops.len() {
        let mut at = None;
        while let Some(m) = marks.next_if(|m| m.0 <= i) {
            at = Some(m.1.clone());
        }
        if let Some(position) = at {
            out.push(Group {
                position,
                ops: Vec::new(),
            });
        } else if out.len() == 1 {
            out.push(Group {
                position: "(unknown position)".to_string(),
                ops: Vec::new(),
            });
        }
        let op = &t.ops[i];
        out.last_mut().expect("a group").ops.push(OpView {
            text: names.op_line_numbered(t, i, true),
            guard: op.resume.as_ref().map(|r| r.id),
            code: code(i),
        });
    }
    out
}

/// What the page will show, gathered while the driver runs.
#[derive(Debug)]
pub struct Recorder {
    name: String,
    file: String,
    traces: Vec<TraceView>,
    entries: HashMap<u32, u64>,
}

impl Recorder {
    /// A recorder for the portal `name`, writing to `file`.
    pub fn new(name: &str, file: &str) -> Recorder {
        Recorder {
            name: name.to_string(),
            file: file.to_string(),
            traces: Vec::new(),
            entries: HashMap::new(),
        }
    }

    /// Adds a compiled trace.
    pub fn add(&mut self, t: TraceView) {
        self.traces.push(t);
    }

    /// The interpreter entered loop trace `id`.
    pub fn entered(&mut self, id: u32) {
        *self.entries.entry(id).or_default() += 1;
    }

    /// Writes the page to the file; returns its path.
    pub fn write(&self, guards: &[GuardCount], stats: &Stats) -> Result<String, String> {
        let page = self.page(guards, stats);
        std::fs::write(&self.file, page).map_err(|e| format!("cannot write {}: {e}", self.file))?;
        Ok(self.file.clone())
    }

    /// The page.
    pub fn page(&self, guards: &[GuardCount], stats: &Stats) -> String {
        let by_id: HashMap<u32, &GuardCount> = guards.iter().map(|g| (g.id, g)).collect();
        let mut hot: Vec<&GuardCount> = guards.iter().filter(|g| g.failures > 0).collect();
        hot.sort_by_key(|g| (std::cmp::Reverse(g.failures), g.id));
        hot.truncate(HOT_GUARDS);
        let hot_ids: Vec<u32> = hot.iter().map(|g| g.id).collect();
        let mut failures: HashMap<u32, u64> = HashMap::new();
        for g in guards {
            *failures.entry(g.trace).or_default() += g.failures;
        }
        let mut h = String::new();
        let title = format!("meta-jit traces of {}", self.name);
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>{}</title><style>{CSS}</style></head><body>\n<header><h1>{}</h1>\
             <p class=\"summary\">{}</p><input id=\"search\" type=\"search\" \
             placeholder=\"search ops, e.g. call_n or guard_true\" autocomplete=\"off\">\
             <span id=\"count\"></span></header>\n",
            esc(&title),
            esc(&title),
            esc(&stats.summary())
        );
        // The tree.
        h.push_str("<nav id=\"tree\"><h2>Loops and bridges</h2><ul>\n");
        for t in self.traces.iter().filter(|t| t.kind == TraceKind::Loop) {
            self.tree(&mut h, t, &failures, 0);
        }
        h.push_str("</ul>\n");
        // The hot guards.
        h.push_str("<h2>Hottest guards</h2><ol id=\"hot\">\n");
        for g in &hot {
            let _ = writeln!(
                h,
                "<li><a href=\"#guard-{}\">guard {}</a> ({} failures{}) {}</li>",
                g.id,
                g.id,
                g.failures,
                if g.bridged { ", bridged" } else { "" },
                esc(g.location.as_deref().unwrap_or(""))
            );
        }
        h.push_str("</ol></nav>\n<main>\n");
        for t in &self.traces {
            self.trace(&mut h, t, &by_id, &hot_ids);
        }
        let _ = write!(h, "</main>\n<script>{JS}</script>\n</body></html>\n");
        h
    }

    fn tree(&self, h: &mut String, t: &TraceView, failures: &HashMap<u32, u64>, depth: usize) {
        let what = match t.kind {
            TraceKind::Loop => format!(
                "loop (trace {}), entered {} times",
                t.id,
                self.entries.get(&t.id).copied().unwrap_or(0)
            ),
            TraceKind::Entry => format!(
                "function entry (trace {}), entered {} times",
                t.id,
                self.entries.get(&t.id).copied().unwrap_or(0)
            ),
            TraceKind::Bridge => format!(
                "bridge (trace {}) from guard {}",
                t.id,
                t.parent.map_or(0, |p| p.1)
            ),
        };
        let _ = write!(
            h,
            "<li class=\"node\" data-trace=\"{}\"><a href=\"#trace-{}\">{}</a>, guards failed {} \
             times <span class=\"pos\">{}</span>",
            t.id,
            t.id,
            esc(&what),
            failures.get(&t.id).copied().unwrap_or(0),
            esc(t.before.get(1).map_or("", |g| g.position.as_str()))
        );
        let kids: Vec<&TraceView> = self
            .traces
            .iter()
            .filter(|c| c.parent.map(|p| p.0) == Some(t.id))
            .collect();
        if !kids.is_empty() && depth < 64 {
            h.push_str("<ul>\n");
            for c in kids {
                self.tree(h, c, failures, depth + 1);
            }
            h.push_str("</ul>");
        }
        h.push_str("</li>\n");
    }

    fn trace(
        &self,
        h: &mut String,
        t: &TraceView,
        guards: &HashMap<u32, &GuardCount>,
        hot: &[u32],
    ) {
        let _ = write!(
            h,
            "<section class=\"trace\" id=\"trace-{}\"><h2>trace {}: {}</h2><div class=\"cols\">",
            t.id,
            t.id,
            esc(&t.header)
        );
        for (title, groups, opt) in [
            ("before optimization", &t.before, false),
            ("after optimization", &t.after, true),
        ] {
            let _ = write!(h, "<div class=\"col\"><h3>{title}</h3>");
            for g in groups {
                let _ = write!(
                    h,
                    "<details class=\"group\" open><summary>{}</summary>",
                    esc(&g.position)
                );
                for op in &g.ops {
                    op_html(h, op, opt, guards, hot);
                }
                h.push_str("</details>");
            }
            h.push_str("</div>");
        }
        h.push_str("</div></section>\n");
    }
}

fn op_html(
    h: &mut String,
    op: &OpView,
    opt: bool,
    guards: &HashMap<u32, &GuardCount>,
    hot: &[u32],
) {
    let mut class = String::from("op");
    let mut badge = String::new();
    let mut id = String::new();
    if let Some(g) = op.guard {
        class.push_str(" guard");
        if let Some(c) = guards.get(&g).filter(|_| opt) {
            if c.failures > 0 {
                badge = format!(" <span class=\"fails\">failed {}×</span>", c.failures);
            }
            if hot.contains(&g) {
                class.push_str(" hot");
            }
            id = format!(" id=\"guard-{g}\"");
        }
    }
    if op.code.is_empty() {
        let _ = write!(
            h,
            "<div class=\"{class}\"{id}><code>{}</code>{badge}</div>",
            esc(&op.text)
        );
    } else {
        let _ = write!(
            h,
            "<details class=\"{class}\"{id}><summary><code>{}</code>{badge}</summary><pre class=\"asm\">{}</pre></details>",
            esc(&op.text),
            esc(&op.code.join("\n"))
        );
    }
}

/// `s` with HTML's special characters escaped.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const CSS: &str = "body{font:14px system-ui,sans-serif;margin:0;display:grid;\
grid-template-columns:22em 1fr;grid-template-rows:auto 1fr;height:100vh}\
header{grid-column:1/3;padding:.4em 1em;background:#20303c;color:#eee}\
header h1{font-size:1.1em;margin:.2em 0}.summary{font-size:.8em;margin:.2em 0;color:#bcd}\
#search{width:30em;font-size:1em}#count{margin-left:1em}\
nav{overflow:auto;padding:0 .6em;border-right:1px solid #ccc;background:#f6f6f6}\
nav h2{font-size:1em}nav ul{padding-left:1.1em}.pos{color:#666;font-size:.85em}\
main{overflow:auto;padding:0 1em}.trace h2{font-size:1em;border-top:2px solid #20303c;padding-top:.4em}\
.cols{display:grid;grid-template-columns:1fr 1fr;gap:1em}.col h3{font-size:.9em;color:#555}\
.group>summary{font-weight:600;color:#245;cursor:pointer}.group{margin:.2em 0 .4em}\
.op{font:12px ui-monospace,monospace;white-space:pre-wrap;padding:1px 4px;margin-left:1em}\
.op>summary{cursor:pointer}.guard code{color:#7a3b00}\
.hot{background:#ffd6cc;border-left:4px solid #d03000}.fails{color:#b00;font-weight:600}\
.asm{background:#eef;margin:2px 0 4px 1.5em;padding:3px}.match code{background:#ff0}\
[hidden]{display:none!important}";

const JS: &str = r#"
(function(){
  var box=document.getElementById('search'), count=document.getElementById('count');
  function apply(q){
    q=q.trim().toLowerCase();
    var n=0;
    document.querySelectorAll('.op').forEach(function(op){
      var t=op.querySelector('code').textContent.toLowerCase();
      var m=q!=='' && t.indexOf(q)>=0;
      op.classList.toggle('match',m);
      op.hidden=q!=='' && !m;
      if(m) n++;
    });
    document.querySelectorAll('.group').forEach(function(g){
      g.hidden=q!=='' && !g.querySelector('.op:not([hidden])');
    });
    document.querySelectorAll('.trace').forEach(function(s){
      s.hidden=q!=='' && !s.querySelector('.op:not([hidden])');
    });
    count.textContent=q===''?'':n+' ops match';
  }
  box.addEventListener('input',function(){apply(box.value);});
  var m=/[#&]search=([^&]*)/.exec(location.hash);
  if(m){box.value=decodeURIComponent(m[1]);apply(box.value);}
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parse::parse;

    #[test]
    fn a_page_shows_groups_guards_and_code() {
        let t = parse(
            "[i0]
             i1 = int_add(i0, 1)
             i2 = int_lt(i1, 10)
             guard_true(i2) [i1]
             jump(i1)",
        )
        .unwrap();
        let marks = vec![(1, "op 3: <+>".to_string())];
        let view = TraceView::new(
            0,
            TraceKind::Loop,
            None,
            "loop 0 of run at op 3: <+>",
            &t,
            &marks,
            &t,
            &marks,
            |i| vec![format!("nop ; op {i}")],
        );
        assert_eq!(view.after.len(), 2);
        assert_eq!(view.after[1].position, "op 3: <+>");
        assert_eq!(view.after[1].ops[2].guard, Some(0));
        let mut r = Recorder::new("run", "/dev/null");
        r.add(view);
        r.entered(0);
        let guards = [GuardCount {
            id: 0,
            trace: 0,
            failures: 7,
            bridged: false,
            location: Some("op 3: <+>".into()),
        }];
        let page = r.page(&guards, &Stats::default());
        assert!(page.contains("entered 1 times"), "{page}");
        assert!(page.contains("guards failed 7 times"));
        assert!(page.contains("class=\"op guard hot\" id=\"guard-0\""));
        assert!(page.contains("failed 7×"));
        assert!(page.contains("op 3: &lt;+&gt;"));
        assert!(page.contains("<pre class=\"asm\">nop ; op 3</pre>"));
        assert!(page.contains("guard_true(i2, id=0)"));
        assert!(!page.contains("<script src") && !page.contains("<link"));
    }
}

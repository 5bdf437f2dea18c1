//! The workspace keeps the shape `DESIGN.md` and `STYLE.md` ask for, checked from its own
//! source on every test run:
//! - no crate has files that import each other in a circle (a file's imports are the items it
//!   names from other files of its crate, re-exports followed to where the item is defined);
//! - no library function returns `Result<_, String>` (or `&str`): errors are structured;
//! - no function of any crate, the CLI's included, runs over 100 lines unless it says why, in a
//!   `// long:` comment in it;
//! - every library's `lib.rs` opens with a `//!` paragraph.
//!
//! Test modules (`#[cfg(test)]`) are left out of every check.
#![allow(clippy::unwrap_used)] // a test: an unwrap that fails is a failing test

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// A module path inside its crate: `[]` is the crate root, `["run", "fs"]` is `run/fs.rs`.
type Module = Vec<String>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `src` of `krate`, by module path.
fn files(krate: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Module, PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let p = e.path();
            if p.is_dir() {
                walk(&p, src, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).unwrap().with_extension("");
                let mut m: Module = rel
                    .iter()
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect();
                if m.last().is_some_and(|l| l == "mod") || m == ["lib"] || m == ["main"] {
                    m.pop();
                }
                out.insert(m, p);
            }
        }
    }
    let mut out = BTreeMap::new();
    let src = krate.join("src");
    walk(&src, &src, &mut out);
    out
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// A use tree flattened into paths (`a::{b, c::d}` → `a::b`, `a::c::d`); `*` kept.
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut v = prefix.clone();
            if n.ident != "self" {
                v.push(n.ident.to_string());
            }
            out.push(v);
        }
        syn::UseTree::Rename(r) => {
            let mut v = prefix.clone();
            v.push(r.ident.to_string());
            out.push(v);
        }
        syn::UseTree::Glob(_) => {
            let mut v = prefix.clone();
            v.push("*".into());
            out.push(v);
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

/// What one file says: its `use`s (public or not), and every other path it names.
#[derive(Default)]
struct Names {
    uses: Vec<(bool, Vec<String>)>,
    paths: Vec<Vec<String>>,
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut out = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut out);
        let public = matches!(u.vis, syn::Visibility::Public(_));
        self.uses.extend(out.into_iter().map(|p| (public, p)));
    }
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(in crate::x)` names a module it does not use.
    }
    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.segments.len() > 1 {
            self.paths
                .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, p);
    }
}

struct Crate {
    files: BTreeMap<Module, PathBuf>,
    names: HashMap<Module, Names>,
}

impl Crate {
    fn load(krate: &Path) -> Crate {
        let files = files(krate);
        let names = files
            .iter()
            .map(|(m, p)| {
                let file = syn::parse_file(&std::fs::read_to_string(p).unwrap())
                    .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                let mut n = Names::default();
                n.visit_file(&file);
                (m.clone(), n)
            })
            .collect();
        Crate { files, names }
    }

    /// The file that defines what `segs` names from module `at` (re-exports followed), if it is
    /// in this crate.
    fn resolve(&self, at: &Module, segs: &[String], depth: u32) -> Option<Module> {
        let (mut base, rest): (Module, &[String]) = match segs.first()?.as_str() {
            "crate" => (vec![], &segs[1..]),
            "self" => (at.clone(), &segs[1..]),
            "super" => (at[..at.len().saturating_sub(1)].to_vec(), &segs[1..]),
            first => {
                let mut child = at.clone();
                child.push(first.to_string());
                if !self.files.contains_key(&child) {
                    return None;
                }
                (at.clone(), segs)
            }
        };
        let mut rest = rest;
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        let mut path = base;
        path.extend(rest.iter().cloned());
        let k = (0..=path.len())
            .rev()
            .find(|&i| self.files.contains_key(&path[..i]))?;
        let module: Module = path[..k].to_vec();
        if k < path.len() && depth < 8 {
            let name = &path[k];
            for (public, u) in &self.names[&module].uses {
                if *public && u.last() == Some(name) {
                    if let Some(r) = self.resolve(&module, u, depth + 1) {
                        return Some(r);
                    }
                }
            }
        }
        Some(module)
    }

    fn edges(&self) -> BTreeMap<Module, BTreeSet<Module>> {
        let mut edges = BTreeMap::new();
        for (m, n) in &self.names {
            let targets: BTreeSet<Module> = n
                .uses
                .iter()
                .map(|(_, u)| u)
                .chain(&n.paths)
                .filter_map(|p| self.resolve(m, p, 0))
                .filter(|t| t != m)
                .collect();
            edges.insert(m.clone(), targets);
        }
        edges
    }
}

/// Strongly connected components of more than one file.
fn circles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    let reach = |from: &Module| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for t in &edges[&m] {
                if seen.insert(t.clone()) {
                    todo.push(t.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&Module, BTreeSet<Module>> =
        edges.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<Vec<Module>> = Vec::new();
    for m in edges.keys() {
        let comp: Vec<Module> = edges
            .keys()
            .filter(|o| *o == m || (reachable[m].contains(*o) && reachable[*o].contains(m)))
            .cloned()
            .collect();
        if comp.len() > 1 && !out.contains(&comp) {
            out.push(comp);
        }
    }
    out
}

fn crates() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    v.sort();
    v
}

fn libraries() -> Vec<PathBuf> {
    crates()
        .into_iter()
        .filter(|c| c.join("src/lib.rs").exists())
        .collect()
}

#[test]
fn no_crate_has_files_that_import_each_other_in_a_circle() {
    let mut found = Vec::new();
    for krate in crates() {
        let c = Crate::load(&krate);
        for comp in circles(&c.edges()) {
            let names: Vec<String> = comp
                .iter()
                .map(|m| {
                    if m.is_empty() {
                        "lib".into()
                    } else {
                        m.join("/")
                    }
                })
                .collect();
            found.push(format!(
                "{}: {}",
                krate.file_name().unwrap().to_string_lossy(),
                names.join(" ↔ ")
            ));
        }
    }
    assert!(found.is_empty(), "file circles:\n{}", found.join("\n"));
}

/// Functions of a file, outside test modules: name, first and last line, return type.
#[derive(Default)]
struct Functions {
    found: Vec<(String, usize, usize, Option<syn::Type>)>,
}

impl Functions {
    fn add(&mut self, sig: &syn::Signature, span: proc_macro2::Span) {
        let ret = match &sig.output {
            syn::ReturnType::Type(_, t) => Some((**t).clone()),
            syn::ReturnType::Default => None,
        };
        self.found.push((
            sig.ident.to_string(),
            span.start().line,
            span.end().line,
            ret,
        ));
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_cfg_test(&f.attrs) {
            self.add(&f.sig, syn::spanned::Spanned::span(f));
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_cfg_test(&f.attrs) {
            self.add(&f.sig, syn::spanned::Spanned::span(f));
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if f.default.is_some() {
            self.add(&f.sig, syn::spanned::Spanned::span(f));
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// A function: its file, name, first and last line, and return type.
type Function = (PathBuf, String, usize, usize, Option<syn::Type>);

/// Every function (outside test modules) of `krates`.
fn functions(krates: Vec<PathBuf>) -> Vec<Function> {
    let mut out = Vec::new();
    for krate in krates {
        for path in files(&krate).into_values() {
            let file = syn::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let mut f = Functions::default();
            f.visit_file(&file);
            for (name, start, end, ret) in f.found {
                out.push((path.clone(), name, start, end, ret));
            }
        }
    }
    out
}

/// `Result<_, String>` or `Result<_, &str>`.
fn string_error(t: &syn::Type) -> bool {
    let syn::Type::Path(p) = t else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    if last.ident != "Result" {
        return false;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    let Some(syn::GenericArgument::Type(err)) = args.args.iter().nth(1) else {
        return false;
    };
    match err {
        syn::Type::Path(e) => e.path.is_ident("String"),
        syn::Type::Reference(r) => matches!(&*r.elem, syn::Type::Path(e) if e.path.is_ident("str")),
        _ => false,
    }
}

#[test]
fn no_library_function_returns_a_string_error() {
    let found: Vec<String> = functions(libraries())
        .into_iter()
        .filter(|(.., ret)| ret.as_ref().is_some_and(string_error))
        .map(|(path, name, start, ..)| format!("{}:{start} {name}", path.display()))
        .collect();
    assert!(
        found.is_empty(),
        "library functions with String errors:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_function_is_over_100_lines_without_saying_why() {
    let mut found = Vec::new();
    for (path, name, start, end, _) in functions(crates()) {
        let lines = end - start + 1;
        if lines <= 100 {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let says_why = text
            .lines()
            .skip(start - 1)
            .take(lines)
            .any(|l| l.trim_start().starts_with("// long:"));
        if !says_why {
            found.push(format!("{}:{start} {name} ({lines} lines)", path.display()));
        }
    }
    assert!(
        found.is_empty(),
        "functions over 100 lines without a `// long:` reason:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_library_opens_with_what_it_is() {
    for krate in libraries() {
        let lib = std::fs::read_to_string(krate.join("src/lib.rs")).unwrap();
        assert!(
            lib.starts_with("//!"),
            "{}/src/lib.rs does not open with a //! paragraph",
            krate.display()
        );
    }
}

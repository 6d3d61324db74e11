//! Every Rust block of the README, CONTRIBUTING.md and the pages in `docs/` and its folders
//! (`docs/recipes/`) is compiled: each is an excerpt of a program in `examples/`, which
//! `cargo test --all-targets` builds. A block may leave parts out with a line `// ...`; the
//! parts must then appear in that order in one example. Indentation may differ as a whole. The
//! relative links of those files, and their `#anchors`, must lead somewhere, and the README's
//! contents must list its sections in order.

use std::path::{Path, PathBuf};

/// A Markdown file's ```rust blocks, each with the line it starts on.
fn rust_blocks(readme: &str) -> Vec<(usize, Vec<&str>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, Vec<&str>)> = None;
    for (index, line) in readme.lines().enumerate() {
        match (&mut current, line.trim_end()) {
            (None, "```rust") => current = Some((index + 1, Vec::new())),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some((_, lines)), _) => lines.push(line),
            (None, _) => {}
        }
    }
    blocks
}

/// The lines without their common indentation and trailing blanks.
fn dedent<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect()
}

/// Where `part` starts in `file` at or after `from`, allowing a whole-part indentation shift.
fn find(file: &[&str], part: &[&str], from: usize) -> Option<usize> {
    let part = dedent(part);
    (from..=file.len().checked_sub(part.len())?)
        .find(|&start| dedent(&file[start..start + part.len()]) == part)
}

/// The parts of a block, split at `// ...` lines.
fn parts<'a>(block: &[&'a str]) -> Vec<Vec<&'a str>> {
    block
        .split(|l| l.trim() == "// ...")
        .map(<[&str]>::to_vec)
        .filter(|p: &Vec<&str>| p.iter().any(|l| !l.trim().is_empty()))
        .collect()
}

fn excerpt_of(block: &[&str], file: &str) -> bool {
    let file: Vec<&str> = file.lines().collect();
    let mut from = 0;
    for part in parts(block) {
        match find(&file, &part, from) {
            Some(at) => from = at + part.len(),
            None => return false,
        }
    }
    true
}

/// The Markdown pages of `dir` and of its folders, by path.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            pages.extend(markdown_under(&path));
        } else if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages.sort();
    pages
}

/// The README, CONTRIBUTING.md, then every Markdown page of `docs/` and its folders
/// (`docs/recipes/`), by path.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    files.extend(markdown_under(&root.join("docs")));
    files
}

#[test]
fn every_rust_block_of_the_readme_and_docs_is_an_excerpt_of_a_compiled_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut examples = Vec::new();
    for entry in std::fs::read_dir(root.join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            examples.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
        }
    }
    let blocks = rust_blocks(&readme);
    assert!(blocks.len() >= 4, "the README's Rust blocks were not found");
    let mut unmatched = Vec::new();
    let mut docs_blocks = 0;
    for file in markdown_files(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(root).unwrap().display().to_string();
        let blocks = rust_blocks(&text);
        if name != "README.md" {
            docs_blocks += blocks.len();
        }
        unmatched.extend(
            blocks
                .iter()
                .filter(|(_, block)| !examples.iter().any(|(_, text)| excerpt_of(block, text)))
                .map(|(line, block)| format!("{name}:{line}: {}", block.first().unwrap_or(&""))),
        );
    }
    assert!(docs_blocks >= 4, "the Rust blocks of docs/ were not found");
    assert!(
        unmatched.is_empty(),
        "these README and docs blocks are in no example under examples/ (copy the example's \
         lines, leaving parts out with `// ...`):\n{}",
        unmatched.join("\n")
    );
}

/// The lines of a Markdown file outside its fenced code blocks, each with its line number.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((index + 1, line));
        }
    }
    lines
}

/// The anchor GitHub gives a heading: lower case, spaces as hyphens, other punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings, a repeated one numbered as GitHub numbers it.
fn anchors(text: &str) -> Vec<String> {
    let mut anchors: Vec<String> = Vec::new();
    for (_, line) in prose(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = slug(heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while anchors.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        anchors.push(anchor);
    }
    anchors
}

/// The targets of a line's inline links `[text](target)`, outside code spans.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    for (index, segment) in line.split('`').enumerate() {
        if index % 2 == 1 {
            continue; // inside a code span
        }
        let mut rest = segment;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            match after.find(')') {
                Some(end) => {
                    targets.push(&after[..end]);
                    rest = &after[end..];
                }
                None => break,
            }
        }
    }
    targets
}

#[test]
fn every_relative_link_of_the_readme_and_docs_leads_somewhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    for file in markdown_files(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.strip_prefix(root).unwrap().display().to_string();
        for (line, content) in prose(&text) {
            for target in link_targets(content) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let linked = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path)
                };
                if !linked.exists() {
                    broken.push(format!("{name}:{line}: {target} (no such file)"));
                } else if !anchor.is_empty() {
                    let linked_text = std::fs::read_to_string(&linked).unwrap_or_default();
                    if !anchors(&linked_text).iter().any(|a| a == anchor) {
                        broken.push(format!("{name}:{line}: {target} (no such heading)"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_contents_list_its_sections_in_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let sections: Vec<String> = prose(&readme)
        .iter()
        .filter_map(|(_, line)| line.strip_prefix("## "))
        .map(slug)
        .collect();
    let start = readme
        .find("Contents:")
        .expect("the README has a contents line");
    let end = start + readme[start..].find("\n\n").unwrap_or(readme.len() - start);
    let listed: Vec<String> = readme[start..end]
        .lines()
        .flat_map(link_targets)
        .filter_map(|target| target.strip_prefix('#'))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        listed, sections,
        "the contents and the README's sections differ"
    );
}

#[test]
fn anchors_are_the_ones_github_makes() {
    assert_eq!(slug(" The executor"), "the-executor");
    assert_eq!(
        slug(" Quality on MetaTool (all 20,614 queries, 199 tools)"),
        "quality-on-metatool-all-20614-queries-199-tools"
    );
    assert_eq!(slug(" At build()"), "at-build");
    assert_eq!(
        anchors("# A\n## A\n```\n# not a heading\n```\n"),
        ["a", "a-1"]
    );
    assert_eq!(
        link_targets("[a](x.md) `[b](y.md)` [c](#z)"),
        ["x.md", "#z"]
    );
}

#[test]
fn an_excerpt_must_keep_its_parts_in_order_and_whole() {
    let file = "fn a() {\n    let x = 1;\n    let y = 2;\n}\nfn b() {}\n";
    assert!(excerpt_of(&["let x = 1;", "let y = 2;"], file));
    assert!(excerpt_of(&["fn a() {", "// ...", "fn b() {}"], file));
    assert!(!excerpt_of(&["fn b() {}", "// ...", "fn a() {"], file));
    assert!(!excerpt_of(&["let x = 1;", "let y = 3;"], file));
    assert!(!excerpt_of(&["let x = 1;", "", "let y = 2;"], file));
}

//! Every Rust block of the README is compiled: each is an excerpt of a program in `examples/`,
//! which `cargo test --all-targets` builds. A block may leave parts out with a line `// ...`;
//! the parts must then appear in that order in one example. Indentation may differ as a whole.

use std::path::Path;

/// The README's ```rust blocks, each with the line it starts on.
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

#[test]
fn every_rust_block_of_the_readme_is_an_excerpt_of_a_compiled_example() {
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
    let unmatched: Vec<String> = blocks
        .iter()
        .filter(|(_, block)| !examples.iter().any(|(_, text)| excerpt_of(block, text)))
        .map(|(line, block)| format!("README.md:{line}: {}", block.first().unwrap_or(&"")))
        .collect();
    assert!(
        unmatched.is_empty(),
        "these README blocks are in no example under examples/ (copy the example's lines, \
         leaving parts out with `// ...`):\n{}",
        unmatched.join("\n")
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

//! The text that represents a tool, and the words BM25 indexes.

use std::borrow::Cow;

use serde_json::Value;
use tool_core::ToolSpec;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Everything retrieval matches a tool by: its name split into words, title, description,
/// keywords, parameter names and descriptions, and example requests.
pub(crate) fn tool_text(spec: &ToolSpec) -> String {
    let m = &spec.metadata;
    let mut parts: Vec<String> = vec![split_name(&spec.name)];
    parts.extend(m.title.iter().cloned());
    parts.push(spec.description.clone());
    parts.extend(m.keywords.iter().cloned());
    parts.extend(m.purposes.iter().cloned());
    if let Some(Value::Object(properties)) = spec.parameters.get("properties") {
        for (name, schema) in properties {
            parts.push(split_name(name));
            if let Some(description) = schema.get("description").and_then(Value::as_str) {
                parts.push(description.to_owned());
            }
        }
    }
    parts.extend(m.examples.iter().cloned());
    parts.retain(|p| !p.trim().is_empty());
    parts.join(". ")
}

/// `get_weatherForecast.v2` -> `get weather forecast v2`.
pub(crate) fn split_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
        } else {
            let boundary = previous.is_some_and(|p| {
                (p.is_lowercase() && c.is_uppercase()) || (p.is_alphabetic() != c.is_alphabetic())
            });
            if boundary && !out.ends_with(' ') {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
        }
        previous = Some(c);
    }
    out.trim().to_owned()
}

const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "do", "does", "for", "from",
    "get", "give", "have", "how", "i", "if", "in", "is", "it", "its", "me", "my", "of", "on", "or",
    "please", "should", "so", "some", "that", "the", "their", "them", "there", "these", "this",
    "to", "use", "was", "we", "what", "when", "where", "which", "who", "will", "with", "would",
    "you", "your", "any", "about", "into", "also", "than",
];

/// Lower-cased, stemmed words without stopwords; camelCase and snake_case split. Text in a
/// script written without spaces (Chinese, Japanese, Thai) becomes its overlapping pairs of
/// characters, so that "北京天气" meets "天气预报" on "天气". Text is read composed (NFC), so
/// that "café" typed with a combining accent meets "café" written with one character.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in split_name(&composed(text)).split(' ') {
        if word.chars().any(unspaced) {
            unspaced_words(word, &mut out);
        } else if !word.is_empty() && !STOPWORDS.contains(&word) {
            out.push(stem(word));
        }
    }
    out
}

/// `text` in Unicode's composed form (NFC): otherwise a letter with a combining mark is split
/// into two words at the mark, which is not alphanumeric.
fn composed(text: &str) -> Cow<'_, str> {
    match is_nfc_quick(text.chars()) {
        IsNormalized::Yes => Cow::Borrowed(text),
        IsNormalized::No | IsNormalized::Maybe => Cow::Owned(text.nfc().collect()),
    }
}

/// Whether a character is of a script written without spaces between words.
fn unspaced(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}' // Hiragana, Katakana
        | '\u{3400}'..='\u{4DBF}' // CJK extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK unified ideographs
        | '\u{F900}'..='\u{FAFF}' // CJK compatibility ideographs
        | '\u{0E00}'..='\u{0E7F}' // Thai
        | '\u{20000}'..='\u{2FA1F}' // CJK extensions B and after
    )
}

/// The words of `word`, which holds unspaced text: each run of it as its pairs of characters
/// (a run of one as itself), the rest as words.
fn unspaced_words(word: &str, out: &mut Vec<String>) {
    let mut rest = word;
    while let Some(c) = rest.chars().next() {
        let kind = unspaced(c);
        let end = rest
            .char_indices()
            .find(|&(_, c)| unspaced(c) != kind)
            .map_or(rest.len(), |(at, _)| at);
        let (run, after) = rest.split_at(end);
        if kind {
            let chars: Vec<char> = run.chars().collect();
            match chars.len() {
                1 => out.push(run.to_owned()),
                _ => out.extend(chars.windows(2).map(|pair| pair.iter().collect())),
            }
        } else if !STOPWORDS.contains(&run) {
            out.push(stem(run));
        }
        rest = after;
    }
}

/// A light suffix stripper: enough to meet "recipes" with "recipe" and "booking" with "book".
/// The plural's ending comes off first, then a verb's, so that "bookings" meets "booking".
fn stem(word: &str) -> String {
    if !word.is_ascii() || word.len() <= 3 {
        return word.to_owned();
    }
    without_verb_ending(&singular(word))
}

/// "recipes" -> "recipe", "stories" -> "story", "boxes" -> "box"; "class" and "status" stay.
fn singular(word: &str) -> String {
    let n = word.len();
    let cut = |suffix: &str| word[..n - suffix.len()].to_owned();
    if n >= 5 && word.ends_with("ies") {
        return format!("{}y", cut("ies"));
    }
    if ["ches", "shes", "xes", "zes", "sses"]
        .iter()
        .any(|s| word.ends_with(s))
    {
        return cut("es");
    }
    if word.ends_with('s') && !["ss", "us", "is"].iter().any(|s| word.ends_with(s)) {
        return cut("s");
    }
    word.to_owned()
}

/// "booking" -> "book", "booked" -> "book"; short words ("thing", "red") stay.
fn without_verb_ending(word: &str) -> String {
    let n = word.len();
    if n >= 6 && word.ends_with("ing") {
        return word[..n - 3].to_owned();
    }
    if n >= 5 && word.ends_with("ed") {
        return word[..n - 2].to_owned();
    }
    word.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_on_case_underscores_dots_and_digits() {
        assert_eq!(
            split_name("get_weatherForecast.v2"),
            "get weather forecast v 2"
        );
        assert_eq!(split_name("HTTPServer"), "httpserver");
        assert_eq!(split_name("AI2sql"), "ai 2 sql");
    }

    #[test]
    fn words_drop_stopwords_and_stem() {
        assert_eq!(
            words("Find me some Recipes for booking flights"),
            ["find", "recipe", "book", "flight"]
        );
        assert_eq!(words("class status"), ["class", "status"]);
        assert_eq!(
            words("boxes wishes stories booked"),
            ["box", "wish", "story", "book"]
        );
    }

    #[test]
    fn the_plural_of_a_word_ending_in_ing_stems_as_the_word_does() {
        // The plural rule returned early: "bookings" was "booking", "booking" was "book".
        for (plural, singular) in [
            ("bookings", "booking"),
            ("meetings", "meeting"),
            ("settings", "setting"),
        ] {
            assert_eq!(stem(plural), stem(singular), "{plural}");
        }
        assert_eq!(words("show my bookings"), ["show", "book"]);
    }

    #[test]
    fn text_without_spaces_is_indexed_by_pairs_of_characters() {
        assert_eq!(words("北京天气"), ["北京", "京天", "天气"]);
        assert_eq!(words("天气预报"), ["天气", "气预", "预报"]);
        assert_eq!(words("iPhone手机 price"), ["phone", "手机", "price"]);
        assert_eq!(words("東京の天気"), ["東京", "京の", "の天", "天気"]);
        assert_eq!(words("雨"), ["雨"]);
    }

    #[test]
    fn a_letter_with_a_combining_mark_is_the_same_word_as_the_composed_letter() {
        let composed = words("caf\u{e9} cr\u{e8}me");
        assert_eq!(composed, ["caf\u{e9}", "cr\u{e8}me"]);
        assert_eq!(words("cafe\u{301} cre\u{300}me"), composed);
    }
}

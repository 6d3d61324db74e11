//! The text that represents a tool, and the words BM25 indexes.

use serde_json::Value;
use tool_core::ToolSpec;

/// Everything retrieval matches a tool by: its name split into words, title, description,
/// keywords, parameter names and descriptions, and example requests.
pub fn tool_text(spec: &ToolSpec) -> String {
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
pub fn split_name(name: &str) -> String {
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

/// Lower-cased, stemmed words without stopwords; camelCase and snake_case split.
pub fn words(text: &str) -> Vec<String> {
    split_name(text)
        .split(' ')
        .filter(|w| !w.is_empty() && !STOPWORDS.contains(w))
        .map(stem)
        .collect()
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
}

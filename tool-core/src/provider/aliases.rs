use std::collections::HashMap;

use serde_json::Value;

use super::encoding::Encoding;
use super::Format;

/// How tools are declared to one provider where that differs from the tools themselves: the
/// names they are declared under, and how a strict schema encodes their arguments.
///
/// A name a provider refuses (dots, slashes, over 64 characters) is declared under an alias
/// made by [`to_portable`](crate::name::to_portable), unique within the request; calls parsed from that provider's responses map back.
/// The aliases are a pure function of the tool names and the format, so the same tool set
/// always gets the same aliases.
///
/// A strict declaration may write a map as `{"key", "value"}` pairs and an untyped value as
/// JSON text (see [`Encoding`]); [`parse_calls`](super::parse_calls) turns such arguments back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Aliases {
    to_real: HashMap<String, String>,
    to_provider: HashMap<String, String>,
    /// By real name, for tools whose declared schema encodes their arguments.
    encodings: HashMap<String, Encoding>,
    /// The real names of the tools declared as custom tools taking text (OpenAI).
    text_tools: std::collections::BTreeSet<String>,
    /// The namespace each tool declared in one is in (OpenAI Responses), by real name.
    namespaces: HashMap<String, String>,
}

impl Aliases {
    /// The aliases for these tool names in this format.
    pub fn for_names<'a>(names: impl IntoIterator<Item = &'a str>, format: Format) -> Self {
        let names: Vec<&str> = names.into_iter().collect();
        let mut taken: std::collections::HashSet<String> = names
            .iter()
            .filter(|n| format.accepts_name(n))
            .map(|n| (*n).to_owned())
            .collect();
        let mut aliases = Aliases::default();
        for name in names {
            if format.accepts_name(name) {
                continue;
            }
            let base = crate::name::to_portable(name);
            let mut alias = base.clone();
            let mut n = 2;
            while taken.contains(&alias) {
                let suffix = format!("_{n}");
                alias = format!(
                    "{}{suffix}",
                    crate::name::truncate(&base, 64 - suffix.len())
                );
                n += 1;
            }
            taken.insert(alias.clone());
            aliases.to_real.insert(alias.clone(), name.to_owned());
            aliases.to_provider.insert(name.to_owned(), alias);
        }
        aliases
    }

    /// The real name of a tool the provider called `provider_name`.
    pub fn real_name<'a>(&'a self, provider_name: &'a str) -> &'a str {
        self.to_real
            .get(provider_name)
            .map_or(provider_name, String::as_str)
    }

    /// The name a tool is declared under.
    pub fn provider_name<'a>(&'a self, real_name: &'a str) -> &'a str {
        self.to_provider
            .get(real_name)
            .map_or(real_name, String::as_str)
    }

    /// Whether no tool needed an alias.
    pub fn is_empty(&self) -> bool {
        self.to_real.is_empty()
    }

    /// Records that `real_name`'s declared schema encodes its arguments.
    pub fn set_encoding(&mut self, real_name: &str, encoding: Encoding) {
        if encoding.is_identity() {
            self.encodings.remove(real_name);
        } else {
            self.encodings.insert(real_name.to_owned(), encoding);
        }
    }

    /// How `real_name`'s declared schema encodes its arguments, if it does.
    pub fn encoding(&self, real_name: &str) -> Option<&Encoding> {
        self.encodings.get(real_name)
    }

    /// Records that `real_name` is declared as a custom tool taking text: its calls and results
    /// go as the API's `custom` ones.
    pub fn set_takes_text(&mut self, real_name: &str) {
        self.text_tools.insert(real_name.to_owned());
    }

    /// Whether `real_name` is declared as a custom tool taking text.
    pub fn takes_text(&self, real_name: &str) -> bool {
        self.text_tools.contains(real_name)
    }

    /// The kind OpenAI's APIs name `real_name` by in a choice or a call: `"custom"` for a
    /// custom tool taking text, `"function"` otherwise.
    pub fn tool_kind(&self, real_name: &str) -> &'static str {
        if self.takes_text(real_name) {
            "custom"
        } else {
            "function"
        }
    }

    /// Records that `real_name` is declared in the namespace `namespace`.
    pub fn set_namespace(&mut self, real_name: &str, namespace: &str) {
        self.namespaces
            .insert(real_name.to_owned(), namespace.to_owned());
    }

    /// The namespace `real_name` is declared in, if any.
    pub fn namespace(&self, real_name: &str) -> Option<&str> {
        self.namespaces.get(real_name).map(String::as_str)
    }

    /// A call's arguments as the tool takes them: decoded when its declaration encoded them.
    pub fn decode_arguments(&self, real_name: &str, arguments: Value) -> Value {
        match self.encodings.get(real_name) {
            Some(encoding) => encoding.decode(arguments),
            None => arguments,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_names_get_unique_aliases_that_map_back() {
        let long = format!("service.{}", "x".repeat(80));
        let names = [
            "github.repos.list",
            "github_repos_list",
            "files/read",
            "ok_name",
            long.as_str(),
            "9lives",
        ];
        let aliases = Aliases::for_names(names, Format::OpenAiChat);
        assert_eq!(aliases.provider_name("ok_name"), "ok_name");
        assert_eq!(
            aliases.provider_name("github_repos_list"),
            "github_repos_list"
        );
        assert_eq!(
            aliases.provider_name("github.repos.list"),
            "github_repos_list_2"
        );
        assert_eq!(aliases.provider_name("files/read"), "files_read");
        assert_eq!(
            aliases.provider_name("9lives"),
            "9lives",
            "OpenAI takes a leading digit"
        );
        let long_alias = aliases.provider_name(&long);
        assert!(
            long_alias.len() <= 64 && Format::OpenAiChat.accepts_name(long_alias),
            "{long_alias}"
        );
        for name in names {
            assert_eq!(aliases.real_name(aliases.provider_name(name)), name);
        }
        assert_eq!(
            Aliases::for_names(["9lives"], Format::Gemini).provider_name("9lives"),
            "_9lives"
        );
    }

    #[test]
    fn mcp_keeps_dotted_names() {
        assert!(Aliases::for_names(["github.repos.list"], Format::Mcp).is_empty());
    }
}

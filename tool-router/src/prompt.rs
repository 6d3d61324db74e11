//! The request a route is for, and the placeholders of a tool's prompt it fills: the set NLWeb
//! fills for its site and conversation.

use std::borrow::Cow;

/// What a route is asked for: the query, its schema.org type, and what NLWeb knows of the site
/// and the conversation (for the prompts' placeholders).
///
/// ```
/// use tool_router::RouteRequest;
///
/// let request = RouteRequest::new("is the tiramisu gluten-free?", "Recipe")
///     .with_site("recipes.example")
///     .with_previous_queries(["tiramisu"]);
/// assert_eq!(request.fill("{request.rawQuery} ({request.type}, {request.site})"),
///            "is the tiramisu gluten-free? (Recipe, recipes.example)");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteRequest {
    /// The user's query.
    pub query: String,
    /// Its schema.org type (`Recipe`); unknown types are read as `Thing`.
    pub schema_type: String,
    /// The query rewritten to stand alone, when the conversation was taken into account.
    pub decontextualized_query: Option<String>,
    /// The site (`{request.site}`).
    pub site: Option<String>,
    /// The user's earlier queries in this conversation.
    pub previous_queries: Vec<String>,
    /// The earlier answers.
    pub previous_answers: Vec<String>,
    /// The page the user is on.
    pub context_url: Option<String>,
    /// What that page is about.
    pub context_description: Option<String>,
}

/// Every placeholder a prompt may use.
pub const PLACEHOLDERS: &[&str] = &[
    "request.query",
    "request.rawQuery",
    "request.type",
    "request.itemType",
    "site.itemType",
    "request.site",
    "request.previousQueries",
    "request.prevAnswers",
    "request.contextUrl",
    "request.contextDescription",
];

impl RouteRequest {
    /// A query of this type.
    pub fn new(query: impl Into<String>, schema_type: impl Into<String>) -> Self {
        RouteRequest {
            query: query.into(),
            schema_type: schema_type.into(),
            ..RouteRequest::default()
        }
    }

    /// The same request, for this site.
    pub fn with_site(mut self, site: impl Into<String>) -> Self {
        self.site = Some(site.into());
        self
    }

    /// The same request, after these queries of the conversation.
    pub fn with_previous_queries<S: Into<String>>(
        mut self,
        queries: impl IntoIterator<Item = S>,
    ) -> Self {
        self.previous_queries = queries.into_iter().map(Into::into).collect();
        self
    }

    /// The same request, with the query rewritten to stand alone.
    pub fn with_decontextualized_query(mut self, query: impl Into<String>) -> Self {
        self.decontextualized_query = Some(query.into());
        self
    }

    /// The value of one placeholder (without braces), or `None` for a name that is not one.
    ///
    /// `{request.query}` is, as in NLWeb, the decontextualized query when there is one, else
    /// the query followed by the previous queries when there are some, else the query.
    pub fn value(&self, name: &str) -> Option<Cow<'_, str>> {
        fn text(value: &Option<String>) -> Cow<'_, str> {
            Cow::Borrowed(value.as_deref().unwrap_or_default())
        }
        Some(match name {
            "request.query" => match (
                &self.decontextualized_query,
                self.previous_queries.is_empty(),
            ) {
                (Some(query), _) => Cow::Borrowed(query.as_str()),
                (None, true) => Cow::Borrowed(self.query.as_str()),
                (None, false) => Cow::Owned(format!(
                    "{} previous queries: {}",
                    self.query,
                    list(&self.previous_queries)
                )),
            },
            "request.rawQuery" => Cow::Borrowed(self.query.as_str()),
            "request.type" | "request.itemType" | "site.itemType" => {
                Cow::Borrowed(self.schema_type.as_str())
            }
            "request.site" => text(&self.site),
            "request.previousQueries" => Cow::Owned(list(&self.previous_queries)),
            "request.prevAnswers" => Cow::Owned(list(&self.previous_answers)),
            "request.contextUrl" => text(&self.context_url),
            "request.contextDescription" => text(&self.context_description),
            _ => return None,
        })
    }

    /// The prompt with its placeholders filled. Braces around anything else (JSON in the
    /// prompt, say) are left as they are.
    pub fn fill(&self, prompt: &str) -> String {
        let mut out = String::with_capacity(prompt.len() + self.query.len());
        let mut rest = prompt;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            match after.find(['}', '{']) {
                Some(close) if after.as_bytes()[close] == b'}' => {
                    match self.value(after[..close].trim()) {
                        Some(value) => out.push_str(&value),
                        None => out.push_str(&rest[open..open + close + 2]),
                    }
                    rest = &after[close + 1..];
                }
                _ => {
                    out.push('{');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// The placeholders of a prompt that look like placeholders (`{word.word}`) but are not one.
pub(crate) fn unknown_placeholders(prompt: &str) -> Vec<String> {
    let mut unknown = Vec::new();
    let mut rest = prompt;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let name = after[..close].trim();
        let dotted = name.contains('.')
            && name.split('.').all(|part| {
                !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        if dotted && !PLACEHOLDERS.contains(&name) && !unknown.iter().any(|u| u == name) {
            unknown.push(name.to_owned());
        }
        rest = &after[close + 1..];
    }
    unknown
}

fn list(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_known_placeholders_and_keeps_other_braces() {
        let request = RouteRequest::new("vegan lasagna", "Recipe");
        let prompt =
            "Query: {request.query} of {request.type}. Answer {\"score\": 0} {unknown.thing} {";
        assert_eq!(
            request.fill(prompt),
            "Query: vegan lasagna of Recipe. Answer {\"score\": 0} {unknown.thing} {"
        );
    }

    #[test]
    fn the_query_carries_previous_queries_unless_decontextualized() {
        let request =
            RouteRequest::new("and without eggs?", "Recipe").with_previous_queries(["pancakes"]);
        assert_eq!(
            request.fill("{request.query}"),
            "and without eggs? previous queries: [\"pancakes\"]"
        );
        let request = request.with_decontextualized_query("pancakes without eggs");
        assert_eq!(request.fill("{request.query}"), "pancakes without eggs");
        assert_eq!(request.fill("{request.rawQuery}"), "and without eggs?");
    }

    #[test]
    fn unknown_placeholders_are_found_once() {
        assert_eq!(
            unknown_placeholders("{request.query} {request.qeury} {request.qeury} {\"a\": 1}"),
            ["request.qeury"]
        );
    }
}

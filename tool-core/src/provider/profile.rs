//! What the strict schema profiles share: their errors and findings, and the transforms every
//! profile uses (constraints moved into the description, combinators simplified, subschemas
//! walked with their JSON pointers). Each profile lives with its API (`openai_strict`,
//! `anthropic`, `gemini`); [`crate::profile`] shows them together.

use serde_json::{Map, Value};

/// Why a schema cannot be put into a profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// The schema has something the profile cannot say, even in a description.
    #[error("{profile}: cannot express the schema at `{at}`: {why}")]
    Inexpressible {
        /// The profile.
        profile: &'static str,
        /// JSON pointer into the schema.
        at: String,
        /// What is in the way.
        why: String,
    },
    /// The schema is larger than the provider's documented limits.
    #[error("{profile}: the schema is over a documented limit: {why}")]
    TooLarge {
        /// The profile.
        profile: &'static str,
        /// Which limit, and by how much.
        why: String,
    },
}

/// One place where a schema breaks a profile's rules, as a checker such as
/// [`check_openai_strict`](crate::profile::check_openai_strict) finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// JSON pointer to the subschema (`""` for the root).
    pub at: String,
    /// What is wrong there.
    pub problem: Problem,
}

impl Finding {
    pub(crate) fn new(at: &str, problem: Problem) -> Self {
        Finding {
            at: at.to_owned(),
            problem,
        }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at.as_str() {
            "" => write!(f, "at the root: {}", self.problem),
            at => write!(f, "at {at}: {}", self.problem),
        }
    }
}

/// What is wrong at one place of a schema, for a profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// The root is not `type: object`.
    #[error("the root must be `type: object`")]
    RootNotObject,
    /// A boolean schema (`true` or `false`), which the profile has no form for.
    #[error("a boolean schema is not allowed")]
    BooleanSchema,
    /// A keyword the profile does not take.
    #[error("`{keyword}` is not allowed")]
    KeywordNotAllowed {
        /// The keyword.
        keyword: String,
    },
    /// A string format the profile does not take.
    #[error("format `{format}` is not supported")]
    FormatNotSupported {
        /// The format.
        format: String,
    },
    /// No `type`, nor anything that stands for one (`anyOf`, `$ref`, `enum`, `const`...).
    #[error("no `type` (nor `anyOf`, `$ref`, `enum` or `const`)")]
    NoType,
    /// A `type` that is not one non-null type name.
    #[error("`type` must be one non-null type name, not {found}")]
    TypeNotSingle {
        /// The `type` found.
        found: Value,
    },
    /// An object that is not closed with `additionalProperties: false`.
    #[error("`additionalProperties` must be false")]
    OpenObject,
    /// An object whose `required` does not list every property.
    #[error("`required` must list every property")]
    NotAllRequired,
    /// `minItems` over 1.
    #[error("`minItems` may only be 0 or 1")]
    MinItemsOverOne,
    /// A `$ref` that does not point into the schema itself.
    #[error("only local refs (`#/...`) are allowed")]
    NonLocalRef,
    /// A `$ref` by which the schema refers to itself (a recursive type), which the profile
    /// cannot take.
    #[error("`$ref` to `{reference}` makes the schema recursive, which is not supported")]
    Recursive {
        /// The ref as written.
        reference: String,
    },
    /// Enum values that are not all strings.
    #[error("enum values must be strings")]
    NonStringEnum,
    /// The schema is over one of the provider's documented limits.
    #[error("the schema is over a documented limit: {why}")]
    OverLimit {
        /// Which limit, and by how much.
        why: String,
    },
}

/// Refuses a schema over the default [`SchemaLimits`](crate::schema::SchemaLimits) before a
/// profile walks it.
pub(crate) fn within_limits(profile: &'static str, schema: &Value) -> Result<(), ProfileError> {
    crate::schema::check_limits(schema, &Default::default()).map_err(|e| ProfileError::TooLarge {
        profile,
        why: e.to_string(),
    })
}

/// A checker's finding for a schema over the default
/// [`SchemaLimits`](crate::schema::SchemaLimits), which it does not walk.
pub(crate) fn findings_within_limits(schema: &Value) -> Result<(), Vec<Finding>> {
    crate::schema::check_limits(schema, &Default::default())
        .map_err(|e| vec![Finding::new("", Problem::OverLimit { why: e.to_string() })])
}

/// Appends `text` to the schema's description, as its own sentence.
pub(crate) fn note(map: &mut Map<String, Value>, text: &str) {
    let description = match map.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.trim().is_empty() => {
            let existing = existing.trim_end();
            let stop = if existing.ends_with(['.', '!', '?']) {
                ""
            } else {
                "."
            };
            format!("{existing}{stop} {text}")
        }
        _ => text.to_owned(),
    };
    map.insert("description".into(), Value::String(description));
}

/// Takes `keyword` out of the schema and writes it into the description in words.
pub(crate) fn move_to_description(map: &mut Map<String, Value>, keyword: &str) {
    if let Some(value) = map.shift_remove(keyword) {
        if keyword == "default" && value.is_null() {
            return; // "absent" needs no words
        }
        note(map, &describe(keyword, &value));
    }
}

/// `oneOf` becomes `anyOf` (the profiles that take only `anyOf` cannot check exclusivity), and an
/// `allOf` of one schema is merged into its parent when that says the same (see [`merged`]).
pub(crate) fn simplify_combinators(map: &mut Map<String, Value>) {
    if let Some(one_of) = map.shift_remove("oneOf") {
        map.insert("anyOf".into(), one_of);
    }
    let Some(Value::Array(all)) = map.get("allOf") else {
        return;
    };
    let [Value::Object(only)] = all.as_slice() else {
        return;
    };
    let mut parent = map.clone();
    parent.shift_remove("allOf");
    if let Some(merged) = merged(parent, only) {
        *map = merged;
    }
}

/// Annotations: the parent's own are kept, the branch's taken where the parent has none.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// `parent` with `branch`, its one `allOf` branch, merged in: the properties of both, the names
/// either requires, and the other keywords of both. `None` when the merged schema would say
/// something else: a property or keyword both have with different values, or a keyword that
/// judges the object's other keys (`additionalProperties`) beside properties from the other side.
fn merged(
    mut parent: Map<String, Value>,
    branch: &Map<String, Value>,
) -> Option<Map<String, Value>> {
    const JUDGES_OTHER_KEYS: &[&str] = &[
        "additionalProperties",
        "unevaluatedProperties",
        "patternProperties",
    ];
    let names = |m: &Map<String, Value>| -> Vec<String> {
        m.get("properties")
            .and_then(Value::as_object)
            .map_or(Vec::new(), |p| p.keys().cloned().collect())
    };
    for (judge, other) in [(branch, &parent), (&parent, branch)] {
        let judged = JUDGES_OTHER_KEYS.iter().any(|k| judge.contains_key(*k));
        let own = names(judge);
        if judged && names(other).iter().any(|n| !own.contains(n)) {
            return None;
        }
    }
    for (keyword, value) in branch {
        match keyword.as_str() {
            "properties" => {
                let Value::Object(properties) = value else {
                    return None;
                };
                let into = parent
                    .entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()));
                let Value::Object(into) = into else {
                    return None;
                };
                for (name, schema) in properties {
                    match into.get(name) {
                        Some(existing) if existing != schema => return None,
                        Some(_) => {}
                        None => {
                            into.insert(name.clone(), schema.clone());
                        }
                    }
                }
            }
            "required" => {
                let Value::Array(required) = value else {
                    return None;
                };
                let into = parent
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                let Value::Array(into) = into else {
                    return None;
                };
                for name in required {
                    if !into.contains(name) {
                        into.push(name.clone());
                    }
                }
            }
            k if ANNOTATIONS.contains(&k) => {
                parent.entry(k).or_insert_with(|| value.clone());
            }
            k => match parent.get(k) {
                Some(existing) if existing != value => return None,
                Some(_) => {}
                None => {
                    parent.insert(k.to_owned(), value.clone());
                }
            },
        }
    }
    Some(parent)
}

/// A constraint, in words a model reads.
pub(crate) fn describe(keyword: &str, value: &Value) -> String {
    let v = compact(value);
    let s = if value.as_u64() == Some(1) { "" } else { "s" };
    match keyword {
        "minLength" => format!("At least {v} character{s}."),
        "maxLength" => format!("At most {v} character{s}."),
        "pattern" => format!("Must match the regular expression {v}."),
        "minimum" => format!("At least {v}."),
        "maximum" => format!("At most {v}."),
        "exclusiveMinimum" => format!("Greater than {v}."),
        "exclusiveMaximum" => format!("Less than {v}."),
        "multipleOf" => format!("A multiple of {v}."),
        "minItems" => format!("At least {v} item{s}."),
        "maxItems" => format!("At most {v} item{s}."),
        "uniqueItems" if value == &Value::Bool(true) => "Items must be unique.".into(),
        "minProperties" if s.is_empty() => "At least 1 property.".into(),
        "maxProperties" if s.is_empty() => "At most 1 property.".into(),
        "minProperties" => format!("At least {v} properties."),
        "maxProperties" => format!("At most {v} properties."),
        "default" => format!("Default: {v}."),
        "format" => format!("Format: {}.", value.as_str().unwrap_or(&v)),
        "enum" => format!(
            "One of: {}.",
            value.as_array().map_or(v.clone(), |items| items
                .iter()
                .map(compact)
                .collect::<Vec<_>>()
                .join(", "))
        ),
        "const" => format!("Must be {v}."),
        _ => format!("Must satisfy `{keyword}`: {v}."),
    }
}

fn compact(value: &Value) -> String {
    value.to_string()
}

/// JSON pointer escaping of one path segment.
pub(crate) fn pointer_push(at: &str, segment: &str) -> String {
    format!("{at}/{}", segment.replace('~', "~0").replace('/', "~1"))
}

/// Calls `visit(schema, pointer)` on `schema` and every subschema below it.
pub(crate) fn walk_with_pointer(schema: &Value, at: &str, visit: &mut dyn FnMut(&Value, &str)) {
    visit(schema, at);
    let Value::Object(map) = schema else { return };
    for (keyword, value) in map {
        let here = pointer_push(at, keyword);
        match (keyword.as_str(), value) {
            (
                "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas",
                Value::Object(entries),
            ) => {
                for (name, sub) in entries {
                    walk_with_pointer(sub, &pointer_push(&here, name), visit);
                }
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(items)) => {
                for (i, sub) in items.iter().enumerate() {
                    walk_with_pointer(sub, &format!("{here}/{i}"), visit);
                }
            }
            (
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "contains"
                | "propertyNames",
                sub @ Value::Object(_),
            ) => {
                walk_with_pointer(sub, &here, visit);
            }
            _ => {}
        }
    }
}

/// Whether a schema describes an object: `type` includes `object`, or it has `properties`.
pub(crate) fn is_object_schema(map: &Map<String, Value>) -> bool {
    types_of(map).iter().any(|t| t == "object") || map.contains_key("properties")
}

/// The combinator beside an object's own `properties` (a `#[serde(flatten)]` enum), if any.
/// A strict profile cannot close such an object: closed on its own properties, it refuses
/// what each branch requires, and nothing fits.
pub(crate) fn branches_beside_properties(map: &Map<String, Value>) -> Option<&'static str> {
    if !map.contains_key("properties") {
        return None;
    }
    ["anyOf", "oneOf", "allOf"]
        .into_iter()
        .find(|k| map.contains_key(*k))
}

/// A checker's answer: `Ok` when nothing was found.
pub(crate) fn verdict(findings: Vec<Finding>) -> Result<(), Vec<Finding>> {
    if findings.is_empty() {
        Ok(())
    } else {
        Err(findings)
    }
}

/// The type names a schema's `type` allows.
pub(crate) fn types_of(map: &Map<String, Value>) -> Vec<String> {
    match map.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn simplify_merges_only_a_single_all_of() {
        let mut one = json!({ "allOf": [{ "type": "string" }], "oneOf": [] })
            .as_object()
            .unwrap()
            .clone();
        simplify_combinators(&mut one);
        assert_eq!(Value::Object(one), json!({ "anyOf": [], "type": "string" }));
        let mut two = json!({ "allOf": [{ "minimum": 1 }, { "maximum": 3 }] })
            .as_object()
            .unwrap()
            .clone();
        simplify_combinators(&mut two);
        assert_eq!(
            two["allOf"].as_array().unwrap().len(),
            2,
            "a longer allOf is left to the profile"
        );
    }

    #[test]
    fn a_single_all_of_merges_its_properties_and_required_names() {
        let mut map = json!({
            "type": "object",
            "description": "Outer",
            "properties": { "a": { "type": "string" } },
            "required": ["a"],
            "allOf": [{
                "description": "Inner",
                "properties": { "a": { "type": "string" }, "b": { "type": "integer" } },
                "required": ["b"]
            }]
        })
        .as_object()
        .unwrap()
        .clone();
        simplify_combinators(&mut map);
        assert_eq!(
            Value::Object(map),
            json!({
                "type": "object",
                "description": "Outer",
                "properties": { "a": { "type": "string" }, "b": { "type": "integer" } },
                "required": ["a", "b"]
            })
        );
    }

    #[test]
    fn a_single_all_of_that_would_mean_something_else_merged_is_kept() {
        for schema in [
            // The same property, two schemas: both apply.
            json!({ "properties": { "a": { "type": "string" } },
                    "allOf": [{ "properties": { "a": { "maxLength": 3 } } }] }),
            // The branch closes over its own properties, which the parent's are not.
            json!({ "properties": { "a": { "type": "string" } },
                    "allOf": [{ "properties": { "b": {} }, "additionalProperties": false }] }),
            // Two bounds of the same keyword.
            json!({ "type": "integer", "minimum": 1, "allOf": [{ "minimum": 5 }] }),
        ] {
            let mut map = schema.as_object().unwrap().clone();
            simplify_combinators(&mut map);
            assert_eq!(Value::Object(map), schema);
        }
    }

    #[test]
    fn notes_join_the_description_as_sentences() {
        let mut map = json!({ "description": "A city" })
            .as_object()
            .unwrap()
            .clone();
        map.insert("minLength".into(), json!(2));
        move_to_description(&mut map, "minLength");
        assert_eq!(map["description"], json!("A city. At least 2 characters."));
        let mut empty = Map::new();
        note(&mut empty, "Default: 3.");
        assert_eq!(empty["description"], json!("Default: 3."));
    }
}

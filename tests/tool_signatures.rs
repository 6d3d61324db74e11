//! What a tool's signature may say: the return type is read by the compiler, not by its spelling
//! (type aliases of `Result` fail like `Result`), keywords as parameter names, defaults for
//! borrowed parameters, the attributes written with their paths, and the facade reached under
//! another name (`crate = path`).

mod common;

use ai_tool::prelude::*;
use serde::Serialize;
use serde_json::json;

use common::tools::serving;

#[derive(Debug, PartialEq)]
pub struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "refused: {}", self.0)
    }
}

type Res<T> = Result<T, String>;
type Outcome<T> = std::result::Result<T, Refused>;
type Fixed = Result<Point, Refused>;

#[derive(Debug, Serialize)]
pub struct Point {
    x: i32,
}

pub struct Aliases;

#[ai_tools]
impl Aliases {
    /// Halves an even number; an alias of `Result<i32, String>`.
    #[ai_tool]
    fn halve(&self, n: i32) -> Res<i32> {
        if n % 2 == 0 {
            Ok(n / 2)
        } else {
            Err(format!("{n} is odd"))
        }
    }

    /// Reads a file, returning `std::io::Result`.
    #[ai_tool]
    fn read(&self, path: String) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }

    /// An alias with the error type fixed, and a struct as the `Ok` value.
    #[ai_tool]
    fn point(&self, x: i32) -> Outcome<Point> {
        if x < 0 {
            return Err(Refused(format!("{x} is negative")));
        }
        Ok(Point { x })
    }

    /// An alias with no parameters at all.
    #[ai_tool]
    fn fixed(&self, x: i32) -> Fixed {
        if x == 0 {
            Err(Refused("zero".into()))
        } else {
            Ok(Point { x })
        }
    }

    /// An alias whose `Ok` value has a converter on the attribute.
    #[ai_tool(convert = Self::shout)]
    fn shout_name(&self, name: String) -> Res<String> {
        if name.is_empty() {
            Err("no name".into())
        } else {
            Ok(name)
        }
    }

    fn shout(text: String) -> ToolOutput {
        ToolOutput::text(text.to_uppercase())
    }

    /// An alias whose `Ok` value is converted by a converter registered by name.
    #[ai_tool]
    fn whisper_name(&self, name: String) -> Outcome<String> {
        Ok(name)
    }
}

#[ai_tool_converter("whisper_name")]
fn whisper(text: String) -> ToolOutput {
    ToolOutput::text(text.to_lowercase())
}

fn executor() -> Executor {
    serving(Aliases)
}

#[tokio::test]
async fn an_alias_of_result_with_a_string_error_fails_on_err() {
    let exec = executor();
    let out = exec.execute("halve", json!({ "n": 4 })).await.unwrap();
    assert_eq!(out.structured, Some(json!(2)));
    let err = exec.execute("halve", json!({ "n": 3 })).await.unwrap_err();
    assert_eq!(err.to_model_text(), "`halve` failed: 3 is odd");
    assert_eq!(err.downcast_ref::<String>(), Some(&"3 is odd".to_owned()));
}

#[tokio::test]
async fn io_result_fails_with_the_io_error() {
    let err = executor()
        .execute("read", json!({ "path": "/no/such/file/anywhere" }))
        .await
        .unwrap_err();
    let io = err.downcast_ref::<std::io::Error>().expect("an io::Error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    // An error type that is a `std::error::Error` is also the failure's source.
    let source = std::error::Error::source(&err).expect("the io::Error as the source");
    let io = source
        .downcast_ref::<std::io::Error>()
        .expect("an io::Error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
}

#[tokio::test]
async fn a_string_error_is_no_source() {
    let err = executor()
        .execute("halve", json!({ "n": 3 }))
        .await
        .unwrap_err();
    assert!(std::error::Error::source(&err).is_none());
}

#[tokio::test]
async fn an_alias_with_a_fixed_error_keeps_the_typed_error_and_serializes_ok() {
    let exec = executor();
    let out = exec.execute("point", json!({ "x": 3 })).await.unwrap();
    assert_eq!(out.structured, Some(json!({ "x": 3 })));
    assert!(!out.is_error);
    let err = exec.execute("point", json!({ "x": -1 })).await.unwrap_err();
    assert_eq!(
        err.downcast_ref::<Refused>(),
        Some(&Refused("-1 is negative".into()))
    );
    let err = exec.execute("fixed", json!({ "x": 0 })).await.unwrap_err();
    assert_eq!(err.to_model_text(), "`fixed` failed: refused: zero");
    let out = exec.execute("fixed", json!({ "x": 1 })).await.unwrap();
    assert_eq!(out.structured, Some(json!({ "x": 1 })));
}

#[tokio::test]
async fn converters_receive_the_ok_value_of_an_alias() {
    let exec = executor();
    let out = exec
        .execute("shout_name", json!({ "name": "Ann" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "ANN");
    let err = exec
        .execute("shout_name", json!({ "name": "" }))
        .await
        .unwrap_err();
    assert_eq!(err.to_model_text(), "`shout_name` failed: no name");
    let out = exec
        .execute("whisper_name", json!({ "name": "Ann" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "ann");
}

pub struct Keywords;

#[ai_tools]
impl Keywords {
    /// Describes a thing, with keywords as parameter names.
    #[ai_tool]
    fn describe(&self, r#type: String, r#match: u32, r#ref: Option<bool>) -> String {
        format!("{} {} {:?}", r#type, r#match, r#ref)
    }

    /// Greets, with a default for a borrowed string and a keyword with a default.
    #[ai_tool]
    fn salute(
        &self,
        #[arg(default = "friend")] name: &str,
        #[arg(default = "hello")] r#type: &str,
        #[arg(default = &[1, 2])] counts: &[u32],
    ) -> String {
        format!("{} {name} {counts:?}", r#type)
    }
}

/// A free function with a keyword parameter.
#[ai_tool]
fn kind_of(r#type: String) -> String {
    r#type
}

fn keywords() -> Executor {
    serving(Keywords)
}

#[tokio::test]
async fn keywords_are_parameter_names_without_their_raw_prefix() {
    let exec = keywords();
    let schema = &exec.spec("describe").unwrap().parameters;
    let names: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["type", "match", "ref"]);
    assert_eq!(schema["required"], json!(["type", "match"]));
    let out = exec
        .execute(
            "describe",
            json!({ "type": "car", "match": 3, "ref": true }),
        )
        .await
        .unwrap();
    assert_eq!(out.to_text(), "car 3 Some(true)");
    let out = exec
        .execute("kind_of", json!({ "type": "bike" }))
        .await
        .unwrap();
    assert_eq!(out.to_text(), "bike");
}

#[tokio::test]
async fn a_borrowed_parameter_takes_a_default_of_its_borrowed_form() {
    let exec = keywords();
    let schema = &exec.spec("salute").unwrap().parameters;
    assert_eq!(schema["properties"]["name"]["default"], json!("friend"));
    assert_eq!(schema["properties"]["counts"]["default"], json!([1, 2]));
    let out = exec.execute("salute", json!({})).await.unwrap();
    assert_eq!(out.to_text(), "hello friend [1, 2]");
    let out = exec
        .execute(
            "salute",
            json!({ "name": "Ann", "type": "hi", "counts": [3] }),
        )
        .await
        .unwrap();
    assert_eq!(out.to_text(), "hi Ann [3]");
}

pub struct Paths;

#[ai_tool::ai_tools]
impl Paths {
    /// Written with the attribute's path.
    #[ai_tool::ai_tool]
    fn by_path(&self) -> u32 {
        1
    }

    /// Written with the attribute's path and settings.
    #[::ai_tool::ai_tool(name = "by_full_path", read_only)]
    fn full(&self, #[arg(description = "a number")] n: u32) -> u32 {
        n
    }
}

#[tokio::test]
async fn attributes_written_with_their_paths_are_recognised() {
    let exec = serving(Paths);
    assert_eq!(
        exec.execute("by_path", json!({})).await.unwrap().to_text(),
        "1"
    );
    let spec = exec.spec("by_full_path").unwrap();
    assert_eq!(spec.metadata.hints.read_only, Some(true));
    assert_eq!(
        spec.parameters["properties"]["n"]["description"],
        json!("a number")
    );
}

/// The facade under another name, as a crate re-exporting `ai_tool` would give it to its users:
/// each attribute takes `crate = path`.
mod renamed {
    use ::ai_tool as my_facade;
    use my_facade::{ai_tool, ai_tool_converter, ai_tools, ToolOutput};

    pub struct Greeter;

    #[ai_tools(crate = my_facade)]
    impl Greeter {
        /// Greets someone.
        #[ai_tool]
        fn greet(&self, name: String) -> String {
            format!("hello {name}")
        }
    }

    /// Counts the letters of a word.
    #[ai_tool(crate = my_facade)]
    pub fn letters(word: String) -> usize {
        word.chars().count()
    }

    #[ai_tool_converter("letters", crate = my_facade)]
    fn letters_as_text(n: usize) -> ToolOutput {
        ToolOutput::text(format!("{n} letters"))
    }
}

#[tokio::test]
async fn the_facade_under_another_name_is_reached_through_crate_path() {
    let exec = serving(renamed::Greeter);
    let greeting = exec.execute("greet", json!({ "name": "Ann" })).await;
    assert_eq!(greeting.unwrap().to_text(), "hello Ann");
    let letters = exec.execute("letters", json!({ "word": "four" })).await;
    assert_eq!(letters.unwrap().to_text(), "4 letters");
}

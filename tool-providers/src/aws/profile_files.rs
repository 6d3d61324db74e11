//! AWS's shared files, `~/.aws/config` and `~/.aws/credentials`: INI sections of
//! `key = value`, read the way botocore reads them, and a profile's settings from both.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tool_model::ModelError;

/// The settings of one section, keys in lower case.
pub(crate) type Settings = HashMap<String, String>;

/// Both files, as read: each a map from profile name to its settings.
pub(crate) struct ProfileFiles {
    config_path: PathBuf,
    credentials_path: PathBuf,
    config: HashMap<String, Settings>,
    credentials: HashMap<String, Settings>,
    /// The config file's `[sso-session NAME]` sections.
    sso_sessions: HashMap<String, Settings>,
    home: Option<PathBuf>,
}

/// One profile: its settings in each file.
pub(crate) struct Profile<'a> {
    /// From the config file (`[profile NAME]`, or `[default]`).
    pub config: Option<&'a Settings>,
    /// From the credentials file (`[NAME]`).
    pub credentials: Option<&'a Settings>,
}

impl Profile<'_> {
    /// A setting, from the credentials file first, as botocore merges them.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        [self.credentials, self.config]
            .into_iter()
            .flatten()
            .find_map(|settings| settings.get(key))
            .map(String::as_str)
            .filter(|value| !value.is_empty())
    }
}

impl ProfileFiles {
    /// The files `AWS_CONFIG_FILE` and `AWS_SHARED_CREDENTIALS_FILE` name, else those in
    /// `$HOME/.aws`. A file that does not exist reads as empty; one that cannot be read is an
    /// error naming it.
    pub(crate) fn read(var: impl Fn(&str) -> Option<String>) -> Result<Self, ModelError> {
        // Without a home, the default files are not looked for (rather than read from the
        // working directory).
        let home = var("HOME").map(PathBuf::from);
        let path = |variable: &str, file: &str| match (var(variable), &home) {
            (Some(path), Some(home)) => expand_home(&path, home),
            (Some(path), None) => PathBuf::from(path),
            (None, Some(home)) => home.join(".aws").join(file),
            (None, None) => PathBuf::new(),
        };
        let config_path = path("AWS_CONFIG_FILE", "config");
        let credentials_path = path("AWS_SHARED_CREDENTIALS_FILE", "credentials");
        let config_text = read_file(&config_path)?;
        let config = profiles(&config_text, true);
        let sso_sessions = named_sections(&config_text, "sso-session");
        let credentials = profiles(&read_file(&credentials_path)?, false);
        Ok(ProfileFiles {
            config_path,
            credentials_path,
            config,
            credentials,
            sso_sessions,
            home,
        })
    }

    /// The files' profiles from their texts, for the fuzz target.
    pub(crate) fn from_texts(config_text: &str, credentials_text: &str) -> Self {
        ProfileFiles {
            config_path: PathBuf::from("config"),
            credentials_path: PathBuf::from("credentials"),
            config: profiles(config_text, true),
            credentials: profiles(credentials_text, false),
            sso_sessions: named_sections(config_text, "sso-session"),
            home: None,
        }
    }

    /// The config file's `[sso-session NAME]`.
    pub(crate) fn sso_session(&self, name: &str) -> Option<&Settings> {
        self.sso_sessions.get(name)
    }

    /// The home directory, if `HOME` is set.
    pub(crate) fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// The two files, for a message: "neither A nor B".
    pub(crate) fn neither(&self) -> String {
        let shown = |path: &Path, default: &str| match path.as_os_str().is_empty() {
            true => format!("{default} (HOME is not set)"),
            false => path.display().to_string(),
        };
        format!(
            "neither {} nor {}",
            shown(&self.credentials_path, "~/.aws/credentials"),
            shown(&self.config_path, "~/.aws/config")
        )
    }

    /// The profile `name`, if either file has it.
    pub(crate) fn profile(&self, name: &str) -> Option<Profile<'_>> {
        let profile = Profile {
            config: self.config.get(name),
            credentials: self.credentials.get(name),
        };
        (profile.config.is_some() || profile.credentials.is_some()).then_some(profile)
    }
}

/// `~/x` as `$HOME/x`.
fn expand_home(path: &str, home: &Path) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => PathBuf::from(path),
    }
}

fn read_file(path: &Path) -> Result<String, ModelError> {
    if path.as_os_str().is_empty() {
        return Ok(String::new());
    }
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(ModelError::Setup(format!(
            "cannot read the AWS file {}: {e}",
            path.display()
        ))),
    }
}

/// The profiles of a file. In the config file a profile is `[profile NAME]` (or `[default]`)
/// and other sections (`[sso-session x]`, `[services x]`) are not profiles; in the credentials
/// file every section is one. A later section or key of the same name wins.
fn profiles(text: &str, config_file: bool) -> HashMap<String, Settings> {
    let name = |section: &str| -> Option<String> {
        if !config_file || section == "default" {
            return Some(section.to_owned());
        }
        section_name(section, "profile")
    };
    gather(text, name)
}

/// The sections `[KIND NAME]` of an INI text, by name.
fn named_sections(text: &str, kind: &str) -> HashMap<String, Settings> {
    gather(text, |section| section_name(section, kind))
}

/// `NAME` of a section `KIND NAME`, split as botocore splits it (`profile "my dev"` is
/// `my dev`).
fn section_name(section: &str, kind: &str) -> Option<String> {
    match split_command(section)?.as_slice() {
        [first, name] if first == kind => Some(name.clone()),
        _ => None,
    }
}

/// The sections that `name` names, merged by name.
fn gather(text: &str, name: impl Fn(&str) -> Option<String>) -> HashMap<String, Settings> {
    let mut out: HashMap<String, Settings> = HashMap::new();
    for (section, settings) in sections(text) {
        if let Some(name) = name(&section) {
            out.entry(name).or_default().extend(settings);
        }
    }
    out
}

/// The sections of an INI text, as Python's `configparser` reads them: `[name]` headers,
/// `key = value` or `key: value` lines (keys in lower case, both sides trimmed), whole-line
/// comments (`#`, `;`), and indented lines continuing the value above (AWS's nested settings,
/// such as `s3 =` and its indented keys).
fn sections(text: &str) -> Vec<(String, Settings)> {
    let mut out: Vec<(String, Settings)> = Vec::new();
    // The key that indented lines continue, and its own indent.
    let mut last_key: Option<(String, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if let (Some((_, settings)), Some((key, key_indent))) = (out.last_mut(), &last_key) {
            if indent > *key_indent {
                if let Some(value) = settings.get_mut(key) {
                    value.push('\n');
                    value.push_str(trimmed);
                }
                continue;
            }
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            out.push((name.trim().to_owned(), Settings::new()));
            last_key = None;
            continue;
        }
        let Some(at) = trimmed.find(['=', ':']) else {
            continue;
        };
        let key = trimmed[..at].trim().to_lowercase();
        let value = trimmed[at + 1..].trim().to_owned();
        if let Some((_, settings)) = out.last_mut() {
            settings.insert(key.clone(), value);
            last_key = Some((key, indent));
        }
    }
    out
}

/// A command line split into words as Python's `shlex.split` splits it (which botocore uses
/// for `credential_process`): spaces between words, `'...'` taken as written, `"..."` with
/// `\"` and `\\` escaped (another `\` is kept), and `\` outside quotes taking the next
/// character as written. `None` when a quote is not closed.
pub(crate) fn split_command(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                words.extend(word.take());
            }
            '\'' => {
                let word = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                let word = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\') => word.push(c),
                            c => {
                                word.push('\\');
                                word.push(c);
                            }
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                let next = chars.next()?;
                word.get_or_insert_with(String::new).push(next);
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_read_like_configparser() {
        let text = "# a comment\n[default]\nregion = eu-west-3\nAWS_Access_Key_Id: AKID \n; also\n\
                    s3 =\n  addressing_style = path\n[profile dev]\nregion=us-east-2\n\
                    [sso-session corp]\nsso_region = us-east-1\n[profile  spaced ]\nregion = x\n";
        let config = profiles(text, true);
        assert_eq!(config["default"]["region"], "eu-west-3");
        assert_eq!(config["default"]["aws_access_key_id"], "AKID");
        assert_eq!(config["default"]["s3"], "\naddressing_style = path");
        assert_eq!(config["dev"]["region"], "us-east-2");
        assert_eq!(config["spaced"]["region"], "x");
        assert!(!config.contains_key("corp") && !config.contains_key("sso-session corp"));
        let credentials = profiles("[dev]\naws_secret_access_key = s\n[profile x]\n", false);
        assert_eq!(credentials["dev"]["aws_secret_access_key"], "s");
        assert!(credentials.contains_key("profile x"));
    }

    #[test]
    fn indented_lines_continue_a_key_only_when_indented_further() {
        let text = "[default]\n    aws_access_key_id = AKID\n    aws_secret_access_key = s\n\
                    s3 =\n  max_concurrent_requests = 2\n[profile \"my dev\"]\nregion = r\n";
        let config = profiles(text, true);
        assert_eq!(config["default"]["aws_access_key_id"], "AKID");
        assert_eq!(config["default"]["aws_secret_access_key"], "s");
        assert_eq!(config["default"]["s3"], "\nmax_concurrent_requests = 2");
        assert_eq!(config["my dev"]["region"], "r");
    }

    #[test]
    fn the_credentials_file_wins_over_the_config_file() {
        let config = profiles(
            "[profile dev]\nregion = r\naws_access_key_id = from-config\n",
            true,
        );
        let credentials = profiles("[dev]\naws_access_key_id = from-credentials\n", false);
        let profile = Profile {
            config: config.get("dev"),
            credentials: credentials.get("dev"),
        };
        assert_eq!(profile.get("aws_access_key_id"), Some("from-credentials"));
        assert_eq!(profile.get("region"), Some("r"));
        assert_eq!(profile.get("role_arn"), None);
    }

    #[test]
    fn commands_split_as_a_shell_splits_them() {
        let split = |line: &str| split_command(line).unwrap();
        assert_eq!(
            split("  aws-vault  export --json dev "),
            ["aws-vault", "export", "--json", "dev"]
        );
        assert_eq!(split(r#"/opt/my tool/x"#), ["/opt/my", "tool/x"]);
        assert_eq!(
            split(r#""/opt/my tool/x" 'a b' c\ d"#),
            ["/opt/my tool/x", "a b", "c d"]
        );
        assert_eq!(
            split(r#""say \"hi\" \n \$x" ''"#),
            [r#"say "hi" \n \$x"#, ""]
        );
        assert_eq!(split("a\\\nb"), ["a\nb"]);
        assert_eq!(split_command("'open"), None);
        assert_eq!(split_command("\"open"), None);
        assert!(split("").is_empty());
    }
}

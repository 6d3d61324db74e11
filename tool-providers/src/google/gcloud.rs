//! The project `gcloud config set project` chose, read from gcloud's configuration files
//! without running gcloud.

use std::path::Path;

/// The `[core] project` of gcloud's active configuration (`CLOUDSDK_ACTIVE_CONFIG_NAME`, else
/// the one named in `active_config`, else `default`), in `configurations/config_{name}` of
/// gcloud's directory `dir`.
pub(crate) fn project(dir: &Path, var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let name = var("CLOUDSDK_ACTIVE_CONFIG_NAME")
        .or_else(|| {
            let text = std::fs::read_to_string(dir.join("active_config")).ok()?;
            Some(text.trim().to_owned()).filter(|name| !name.is_empty())
        })
        .unwrap_or_else(|| "default".to_owned());
    let text = std::fs::read_to_string(dir.join("configurations").join(format!("config_{name}")));
    core_project(&text.ok()?)
}

/// `project` in the `[core]` section of a gcloud configuration file.
fn core_project(text: &str) -> Option<String> {
    let mut in_core = false;
    for line in text.lines().map(str::trim) {
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_core = section.trim() == "core";
        } else if let (true, Some((key, value))) = (in_core, line.split_once('=')) {
            if key.trim() == "project" && !value.trim().is_empty() {
                return Some(value.trim().to_owned());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_active_configurations_core_project_is_read() {
        let dir = std::env::temp_dir().join(format!("ai-tool-gcloud-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("configurations")).unwrap();
        std::fs::write(
            dir.join("configurations/config_default"),
            "[compute]\nproject = not-this\n[core]\naccount = me@example.com\nproject = p-default\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("configurations/config_work"),
            "[core]\nproject = p-work\n",
        )
        .unwrap();
        assert_eq!(project(&dir, |_| None).as_deref(), Some("p-default"));
        std::fs::write(dir.join("active_config"), "work\n").unwrap();
        assert_eq!(project(&dir, |_| None).as_deref(), Some("p-work"));
        let chosen = |name: &str| (name == "CLOUDSDK_ACTIVE_CONFIG_NAME").then(|| "default".into());
        assert_eq!(project(&dir, chosen).as_deref(), Some("p-default"));
        assert_eq!(project(&dir.join("absent"), |_| None), None);
        std::fs::remove_dir_all(dir).ok();
    }
}

//! What the configuration's tests share: configuration read from a file's
//! text and a few variables, as if at `/pkg`.

use super::Config;
use crate::core::ConfigError;
use std::collections::HashMap;
use std::path::Path;

pub(super) fn load(toml: Option<&str>, vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let env = move |name: &str| vars.get(name).cloned();
    Config::from_sources(
        toml.map(|t| (t, Path::new("/pkg/ragaliq.toml"))),
        Path::new("/pkg"),
        &env,
    )
}

pub(super) fn err(toml: Option<&str>, vars: &[(&str, &str)]) -> String {
    load(toml, vars).unwrap_err().to_string()
}

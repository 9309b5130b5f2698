//! A setting from its `RAGALIQ_*` variable, else its key in the file:
//! checked, and named by its origin when it is invalid. Every section
//! reads its keys through [`Resolver`].

use crate::core::ConfigError;
use std::fmt::Display;

pub(super) fn float(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|x| x.is_finite())
}

pub(super) fn text(s: &str) -> Option<String> {
    Some(s.trim().to_owned())
}

pub(super) fn boolean(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
    }
}

pub(super) fn int(s: &str) -> Option<i64> {
    s.trim().parse().ok()
}

/// Picks a setting from the environment, else the file, checking it and
/// naming its origin when it is invalid.
pub(super) struct Resolver<'a> {
    pub(super) env: &'a dyn Fn(&str) -> Option<String>,
    pub(super) file: &'a str,
}

impl Resolver<'_> {
    pub(super) fn pick<T: Display>(
        &self,
        var: &str,
        key: &str,
        from_file: Option<T>,
        parse: impl Fn(&str) -> Option<T>,
        check: impl Fn(&T) -> bool,
        expected: &str,
    ) -> Result<Option<T>, ConfigError> {
        if let Some(text) = (self.env)(var) {
            return match parse(&text) {
                Some(v) if check(&v) => Ok(Some(v)),
                _ => Err(ConfigError::Invalid {
                    origin: var.to_owned(),
                    value: text,
                    expected: expected.to_owned(),
                }),
            };
        }
        self.pick_file(key, from_file, check, expected)
    }

    pub(super) fn pick_file<T: Display>(
        &self,
        key: &str,
        from_file: Option<T>,
        check: impl Fn(&T) -> bool,
        expected: &str,
    ) -> Result<Option<T>, ConfigError> {
        match from_file {
            Some(v) if !check(&v) => Err(ConfigError::Invalid {
                origin: format!("{}: {key}", self.file),
                value: v.to_string(),
                expected: expected.to_owned(),
            }),
            other => Ok(other),
        }
    }
}

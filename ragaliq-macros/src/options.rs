//! The options of ragaliq's assertion macros, checked here so that a wrong
//! one is an error on that option, naming the options the macro takes.
//!
//! Input: `macro_name, path::to::OptionsStruct, [allowed, names], key = value, …`.
//! Output: `path::to::OptionsStruct { key: into_option(value), .., ..Default::default() }`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Path, Token, bracketed};

struct Input {
    macro_name: Ident,
    target: Path,
    allowed: Vec<Ident>,
    options: Vec<(Ident, Expr)>,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let macro_name: Ident = input.parse()?;
        input.parse::<Token![,]>()?;
        let target: Path = input.parse()?;
        input.parse::<Token![,]>()?;
        let content;
        bracketed!(content in input);
        let allowed: Punctuated<Ident, Token![,]> = Punctuated::parse_terminated(&content)?;
        let mut options = Vec::new();
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            options.push((key, value));
        }
        Ok(Input {
            macro_name,
            target,
            allowed: allowed.into_iter().collect(),
            options,
        })
    }
}

/// Expands the options, or errors on the first wrong one.
pub fn expand(input: TokenStream) -> TokenStream {
    let input: Input = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let allowed: Vec<String> = input.allowed.iter().map(ToString::to_string).collect();
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    let mut seen: Vec<String> = Vec::new();
    for (key, _) in &input.options {
        let name = key.to_string();
        if !allowed.contains(&name) {
            let hint = closest(&name, &allowed)
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default();
            push(syn::Error::new(
                key.span(),
                format!(
                    "unknown option `{name}` for {}!{hint}; expected one of: {}",
                    input.macro_name,
                    allowed.join(", ")
                ),
            ));
        } else if seen.contains(&name) {
            push(syn::Error::new(
                key.span(),
                format!("`{name}` is given twice"),
            ));
        }
        seen.push(name);
    }
    if let Some(e) = errors {
        return e.to_compile_error();
    }
    let target = &input.target;
    let fields = input.options.iter().map(|(k, v)| {
        quote! { #k: ::core::option::Option::Some(::core::convert::From::from(#v)) }
    });
    quote! {{
        #[allow(clippy::needless_update)]
        let options = #target { #(#fields,)* ..::core::default::Default::default() };
        options
    }}
}

/// The allowed name within two edits of `name`, if one is.
fn closest<'a>(name: &str, allowed: &'a [String]) -> Option<&'a str> {
    allowed
        .iter()
        .map(|a| (distance(name, a), a))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a.as_str())
}

/// Levenshtein distance.
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_options_name_the_valid_ones_and_the_nearest() {
        let out = expand(quote!(
            assert_faithful,
            Opts,
            [threshold, weights],
            treshold = 0.9
        ))
        .to_string();
        assert!(
            out.contains("unknown option `treshold` for assert_faithful! (did you mean `threshold`?); expected one of: threshold, weights"),
            "{out}"
        );
        let out = expand(quote!(
            assert_faithful,
            Opts,
            [threshold],
            threshold = 0.9,
            threshold = 1.0
        ))
        .to_string();
        assert!(out.contains("`threshold` is given twice"), "{out}");
        let out = expand(quote!(assert_faithful, Opts, [threshold], threshold = 0.9,)).to_string();
        assert!(
            out.contains("threshold : :: core :: option :: Option :: Some"),
            "{out}"
        );
    }
}

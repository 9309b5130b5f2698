//! Parsing `#[rag_test(...)]` and generating the test, over proc_macro2 so it
//! can be tested without a compiler session.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, LitStr, ReturnType};

const OPTIONS: &str = "mode, judge, config, name, flavor, crate";
const MODES: [&str; 4] = ["replay", "auto", "record", "live"];
const FLAVORS: [&str; 2] = ["current_thread", "multi_thread"];
const PROVIDERS: [&str; 4] = ["openai", "anthropic", "ollama", "openai-compatible"];

/// The attribute's options, validated.
#[derive(Default)]
struct Options {
    mode: Option<LitStr>,
    judge: Option<LitStr>,
    config: Option<LitStr>,
    name: Option<LitStr>,
    multi_thread: bool,
    krate: Option<syn::Path>,
}

/// Expands `#[rag_test(args)] item`. On error, emits the item unchanged with
/// `compile_error!`s, so the rest of the crate (and the IDE) still sees it.
pub fn rag_test(args: TokenStream, item: TokenStream) -> TokenStream {
    let function: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => return with_errors(item, e),
    };
    let options = parse_options(args);
    let checked = check_function(&function);
    match (options, checked) {
        (Ok(options), Ok(())) => generate(function, options),
        (Err(mut a), Err(b)) => {
            a.combine(b);
            with_errors(item, a)
        }
        (Err(e), _) | (_, Err(e)) => with_errors(item, e),
    }
}

fn with_errors(item: TokenStream, error: syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    quote! { #errors #item }
}

fn parse_options(args: TokenStream) -> syn::Result<Options> {
    let mut options = Options::default();
    let mut flavor: Option<LitStr> = None;
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    let parser = syn::meta::parser(|meta| {
        let key = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_else(|| meta.path.to_token_stream().to_string());
        let slot = match key.as_str() {
            "mode" => &mut options.mode,
            "judge" => &mut options.judge,
            "config" => &mut options.config,
            "name" => &mut options.name,
            "flavor" => &mut flavor,
            "crate" => {
                let lit: LitStr = meta.value()?.parse()?;
                if options.krate.is_some() {
                    return Err(syn::Error::new(lit.span(), "`crate` is given twice"));
                }
                options.krate = Some(lit.parse().map_err(|_| {
                    syn::Error::new(
                        lit.span(),
                        "`crate` must be a path, such as \"ragaliq\" or \"::my_reexport::ragaliq\"",
                    )
                })?);
                return Ok(());
            }
            _ => {
                return Err(meta.error(format!(
                    "unknown option `{key}`; expected one of: {OPTIONS}"
                )));
            }
        };
        let lit: LitStr = meta.value()?.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("`{key}` takes a string literal, as in {key} = \"…\""),
            )
        })?;
        if slot.is_some() {
            return Err(syn::Error::new(
                lit.span(),
                format!("`{key}` is given twice"),
            ));
        }
        *slot = Some(lit);
        Ok(())
    });
    if let Err(e) = parser.parse2(args) {
        push(e);
    }
    if let Some(mode) = options
        .mode
        .as_ref()
        .filter(|m| !MODES.contains(&m.value().as_str()))
    {
        push(syn::Error::new(
            mode.span(),
            format!(
                "unknown mode `{}`; expected one of: {}",
                mode.value(),
                MODES.join(", ")
            ),
        ));
    }
    if let Some(judge) = &options.judge {
        let value = judge.value();
        let provider = value.split(':').next().unwrap_or_default();
        let url = value.starts_with("http://") || value.starts_with("https://");
        if !url && !PROVIDERS.contains(&provider) {
            push(syn::Error::new(
                judge.span(),
                format!(
                    "unknown judge provider `{provider}`; expected `provider:model` with provider one of: {}",
                    PROVIDERS.join(", ")
                ),
            ));
        }
    }
    if let Some(name) = &options.name {
        let value = name.value();
        let valid = !value.is_empty()
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !valid {
            push(syn::Error::new(
                name.span(),
                "`name` must be a non-empty recording name of letters, digits, `_`, `-` and `.`",
            ));
        }
    }
    if let Some(flavor) = &flavor {
        match flavor.value().as_str() {
            "current_thread" => {}
            "multi_thread" => options.multi_thread = true,
            other => push(syn::Error::new(
                flavor.span(),
                format!(
                    "unknown flavor `{other}`; expected one of: {}",
                    FLAVORS.join(", ")
                ),
            )),
        }
    }
    match errors {
        Some(e) => Err(e),
        None => Ok(options),
    }
}

fn check_function(f: &ItemFn) -> syn::Result<()> {
    let sig = &f.sig;
    let mut errors: Vec<syn::Error> = Vec::new();
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new(
            sig.fn_token.span(),
            "#[rag_test] needs an `async fn`",
        ));
    }
    if let Some(c) = &sig.constness {
        errors.push(syn::Error::new(
            c.span(),
            "#[rag_test] functions cannot be `const`",
        ));
    }
    if !matches!(sig.safety, syn::Safety::Default) {
        errors.push(syn::Error::new_spanned(
            &sig.safety,
            "#[rag_test] functions cannot be `unsafe` or `safe`",
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            "#[rag_test] functions cannot have an ABI",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "#[rag_test] functions cannot be generic",
        ));
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            v,
            "#[rag_test] functions cannot be variadic",
        ));
    }
    for (i, arg) in sig.inputs.iter().enumerate() {
        match arg {
            FnArg::Receiver(r) => errors.push(syn::Error::new_spanned(
                r,
                "#[rag_test] functions cannot take `self`",
            )),
            FnArg::Typed(_) if i > 0 => errors.push(syn::Error::new_spanned(
                arg,
                "#[rag_test] functions take at most one parameter, the judge: `judge: Judge`",
            )),
            FnArg::Typed(_) => {}
        }
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        errors.push(syn::Error::new_spanned(
            ty,
            "#[rag_test] functions return `()`: fail with the assertion macros or a panic",
        ));
    }
    for attr in &f.attrs {
        if attr.path().is_ident("test")
            || attr
                .path()
                .segments
                .last()
                .is_some_and(|s| s.ident == "test")
        {
            errors.push(syn::Error::new_spanned(
                attr,
                "remove this attribute: #[rag_test] already makes the function a test",
            ));
        }
    }
    let mut all = errors.into_iter();
    match all.next() {
        None => Ok(()),
        Some(mut first) => {
            for e in all {
                first.combine(e);
            }
            Err(first)
        }
    }
}

fn generate(f: ItemFn, options: Options) -> TokenStream {
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
        ..
    } = f;
    let ident = &sig.ident;
    let krate = options
        .krate
        .map_or_else(|| quote!(::ragaliq), |p| p.to_token_stream());
    let function = ident.to_string();
    let name = options.name.map_or_else(|| function.clone(), |n| n.value());
    let mode = match &options.mode {
        Some(m) => {
            let variant = syn::Ident::new(&capitalize(&m.value()), m.span());
            quote!(::core::option::Option::Some(#krate::Mode::#variant))
        }
        None => quote!(::core::option::Option::None),
    };
    let judge = match &options.judge {
        Some(j) => quote!(::core::option::Option::Some(#j)),
        None => quote!(::core::option::Option::None),
    };
    let config = match &options.config {
        Some(c) => quote!(::core::option::Option::Some(#c)),
        None => quote!(::core::option::Option::None),
    };
    let multi_thread = options.multi_thread;
    let should_panic = attrs.iter().any(|a| a.path().is_ident("should_panic"));
    // `#[should_panic]` without `expected` passes on any panic of the
    // test's own code (ragaliq fails it on an assertion that failed for
    // another reason than a low score): warn at the attribute.
    let warning = attrs
        .iter()
        .find(|a| a.path().is_ident("should_panic") && matches!(a.meta, syn::Meta::Path(_)))
        .map(|a| {
            quote_spanned! {a.span()=>
                #krate::__private::should_panic_without_expected();
            }
        });
    let param = match sig.inputs.first() {
        Some(FnArg::Typed(p)) => {
            let (pat, ty) = (&p.pat, &p.ty);
            quote!(#pat: #ty)
        }
        _ => quote!(_: #krate::Judge),
    };
    // The body keeps its own spans, so errors in it point at the user's code.
    let body = quote_spanned! {block.span()=>
        ::std::boxed::Box::pin(async move #block)
    };
    quote_spanned! {Span::call_site()=>
        #(#attrs)*
        #[::core::prelude::v1::test]
        #vis fn #ident() {
            #warning
            #krate::__private::run_test(
                #krate::__private::TestSpec {
                    name: #name,
                    function: #function,
                    module_path: ::core::module_path!(),
                    file: ::core::file!(),
                    line: ::core::line!(),
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                    package: ::core::env!("CARGO_PKG_NAME"),
                    mode: #mode,
                    judge: #judge,
                    config: #config,
                    multi_thread: #multi_thread,
                    should_panic: #should_panic,
                },
                |#param| #body,
            );
        }
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pretty(tokens: TokenStream) -> String {
        match syn::parse2::<syn::File>(tokens.clone()) {
            Ok(file) => prettyplease::unparse(&file),
            Err(_) => tokens.to_string(),
        }
    }

    fn expand(args: TokenStream, item: TokenStream) -> String {
        pretty(rag_test(args, item))
    }

    #[test]
    fn expands_a_test_with_a_judge() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                /// Refunds.
                async fn refund_policy(judge: Judge) {
                    assert_faithful!(judge, case());
                }
            }
        ));
    }

    #[test]
    fn expands_every_option() {
        insta::assert_snapshot!(expand(
            quote!(
                mode = "replay",
                judge = "anthropic:claude-x",
                config = "tests/judges/claude.toml",
                name = "refunds",
                flavor = "multi_thread",
                crate = "my::ragaliq"
            ),
            quote! {
                #[ignore]
                pub async fn no_judge() {}
            }
        ));
    }

    #[test]
    fn should_panic_without_expected_is_warned_against() {
        let warned = expand(
            quote!(),
            quote! {
                #[should_panic]
                async fn caught(judge: Judge) {}
            },
        );
        assert!(warned.contains("should_panic: true"), "{warned}");
        assert!(
            warned.contains("::ragaliq::__private::should_panic_without_expected();"),
            "{warned}"
        );
        let quiet = expand(
            quote!(),
            quote! {
                #[should_panic(expected = "faithfulness")]
                async fn caught(judge: Judge) {}
            },
        );
        assert!(quiet.contains("should_panic: true"), "{quiet}");
        assert!(!quiet.contains("should_panic_without_expected"), "{quiet}");
    }

    #[test]
    fn errors_keep_the_item() {
        let out = rag_test(
            quote!(mode = "fast"),
            quote!(
                async fn t(judge: Judge) {}
            ),
        )
        .to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(
            out.contains("unknown mode `fast`; expected one of: replay, auto, record, live"),
            "{out}"
        );
        assert!(
            out.contains("async fn t"),
            "the original item is emitted: {out}"
        );
    }

    #[test]
    fn every_error_is_reported_at_once() {
        let out = rag_test(
            quote!(flavor = "wide", colour = "blue"),
            quote!(
                fn t<T>(a: u8, b: u8) -> u8 {
                    0
                }
            ),
        )
        .to_string();
        for message in [
            "unknown option `colour`",
            "needs an `async fn`",
            "cannot be generic",
            "at most one parameter",
            "return `()`",
        ] {
            assert!(out.contains(message), "missing {message:?} in {out}");
        }
    }
}

//! `assert_retrieved!`'s comparison, checked here so that a wrong one is an
//! error on the tokens at fault: `recall_at(5) >= 0.8`.
//!
//! Input: `path::to::retrieval, METRIC >= THRESHOLD`.
//! Output: `(METRIC, THRESHOLD)`, where a call of one of the retrieval
//! module's functions by its bare name (`recall_at(5)`, also as the
//! receiver of `.exponential()`) is called through `path::to::retrieval`,
//! so a test needs no `use` for it.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Path, Token};

/// The functions of `ragaliq::retrieval` that make a metric.
const METRICS: [&str; 12] = [
    "hit_rate_at",
    "hit_rate",
    "recall_at",
    "recall",
    "precision_at",
    "precision",
    "mrr",
    "mrr_at",
    "average_precision",
    "average_precision_at",
    "ndcg_at",
    "ndcg",
];

struct Input {
    module: Path,
    comparison: Expr,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let module: Path = input.parse()?;
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            return Err(input.error(USAGE));
        }
        let comparison: Expr = input.parse()?;
        if !input.is_empty() {
            return Err(input.error(format!("unexpected tokens after the comparison; {USAGE}")));
        }
        Ok(Input { module, comparison })
    }
}

const USAGE: &str = "assert_retrieved! takes a case (or a slice of cases) and a comparison `metric >= threshold`, e.g. `assert_retrieved!(case, recall_at(5) >= 0.8)`";

/// Expands the comparison, or errors at the first thing wrong with it.
pub fn expand(input: TokenStream) -> TokenStream {
    let input: Input = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let (metric, threshold) = match input.comparison {
        Expr::Binary(b) if matches!(b.op, BinOp::Ge(_)) => (*b.left, *b.right),
        Expr::Binary(b) => {
            return syn::Error::new(
                b.op.span(),
                format!(
                    "assert_retrieved! compares with `>=` (a case passes at or above the threshold), not `{}`: e.g. `recall_at(5) >= 0.8`",
                    b.op.to_token_stream()
                ),
            )
            .to_compile_error();
        }
        other => {
            return syn::Error::new(
                other.span(),
                format!("expected `metric >= threshold`; {USAGE}"),
            )
            .to_compile_error();
        }
    };
    let metric = match qualify(metric, &input.module) {
        Ok(m) => m,
        Err(e) => return e.to_compile_error(),
    };
    quote! { (#metric, #threshold) }
}

/// Calls a retrieval function named bare through `module`, also inside a
/// chain of method calls; anything else is left as written (a variable, a
/// function of the test's own). A bare name two edits from a retrieval
/// function's is taken for a typo.
fn qualify(expr: Expr, module: &Path) -> syn::Result<Expr> {
    match expr {
        Expr::MethodCall(mut call) => {
            *call.receiver = qualify(*call.receiver, module)?;
            Ok(Expr::MethodCall(call))
        }
        Expr::Call(mut call) => {
            if let Expr::Path(p) = &*call.func
                && p.qself.is_none()
                && let Some(name) = p.path.get_ident()
            {
                let name = name.to_string();
                if METRICS.contains(&name.as_str()) {
                    let ident = p.path.segments[0].ident.clone();
                    *call.func = syn::parse_quote!(#module::#ident);
                } else if let Some(near) = closest(&name) {
                    return Err(syn::Error::new(
                        p.span(),
                        format!(
                            "unknown retrieval metric `{name}` (did you mean `{near}`?); expected one of: {}",
                            METRICS.join(", ")
                        ),
                    ));
                }
            }
            Ok(Expr::Call(call))
        }
        Expr::Paren(mut p) => {
            *p.expr = qualify(*p.expr, module)?;
            Ok(Expr::Paren(p))
        }
        other => Ok(other),
    }
}

fn closest(name: &str) -> Option<&'static str> {
    METRICS
        .iter()
        .map(|m| (crate::options::distance(name, m), *m))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, m)| m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(tokens: TokenStream) -> String {
        expand(tokens).to_string()
    }

    #[test]
    fn bare_metric_calls_go_through_the_module() {
        let out = expanded(quote!(crate::retrieval, recall_at(5) >= 0.8));
        assert_eq!(out, "(crate :: retrieval :: recall_at (5) , 0.8)");
        let out = expanded(quote!(crate::retrieval, ndcg_at(10).exponential() >= t));
        assert_eq!(
            out,
            "(crate :: retrieval :: ndcg_at (10) . exponential () , t)"
        );
        let out = expanded(quote!(crate::retrieval, my_metric >= 0.5));
        assert_eq!(out, "(my_metric , 0.5)", "a variable is left as written");
        let out = expanded(quote!(crate::retrieval, own_metric(3) >= 0.5));
        assert_eq!(
            out, "(own_metric (3) , 0.5)",
            "a function of the test's own"
        );
    }

    #[test]
    fn wrong_comparisons_and_typos_say_what_is_expected() {
        let out = expanded(quote!(crate::retrieval, recall_at(5) > 0.8));
        assert!(out.contains("compares with `>=`"), "{out}");
        let out = expanded(quote!(crate::retrieval, recal_at(5) >= 0.8));
        assert!(
            out.contains("unknown retrieval metric `recal_at` (did you mean `recall_at`?)"),
            "{out}"
        );
        let out = expanded(quote!(crate::retrieval, recall_at(5)));
        assert!(out.contains("expected `metric >= threshold`"), "{out}");
        let out = expanded(quote!(crate::retrieval,));
        assert!(out.contains("assert_retrieved! takes a case"), "{out}");
    }
}

//! The pieces of ragaliq's HTML pages (the suite's `report.html`, the
//! calibration's page): escaping, the page shell with its inline style and
//! script, text with marked spans, and small inline SVG charts.
//!
//! Every page is one self-contained file: no network, no CDN, no framework,
//! so it opens from a CI artifact as it is. Colour is never the only signal:
//! every coloured outcome or verdict also carries its word or symbol.
//! Every text that comes from a case, a judge or a file goes through
//! [`escape`], so a response holding `<script>` shows as text.

use std::fmt::Write as _;
use std::ops::Range;

/// `s` with `& < > " '` written as entities: safe in element content and in
/// quoted attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An id made of `parts` that is safe in an `id` attribute and a `#`
/// link: letters, digits, `-` and `_` kept, anything else written as
/// `.` plus its code point, so two different inputs never share an id.
pub(crate) fn id(parts: &[&str]) -> String {
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str("--");
        }
        for c in part.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                out.push(c);
            } else if c == '-' {
                out.push_str("-.");
            } else {
                let _ = write!(out, ".{:x}", u32::from(c));
            }
        }
    }
    out
}

/// The style every page shares. Outcome and verdict classes pair a
/// background with a darker text colour of the same hue (contrast above
/// 4.5:1 on both), and the text beside them always says the word.
const STYLE: &str = r#"
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:0 24px 48px;max-width:1200px}
h1{font-size:22px;margin:20px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
.muted{color:var(--muted)}code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
table{border-collapse:collapse;margin:6px 0 12px}th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}.card{border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:110px}
.card b{display:block;font-size:20px}
.o-passed,.v-supported{background:#dafbe1;color:#116329}
.o-failed,.v-contradicted{background:#ffebe9;color:#a40e26}
.o-undecided,.v-partially_supported{background:#fff8c5;color:#7d4e00}
.o-awaiting,.v-uncertain{background:#fff1e5;color:#953800;outline:2px dotted #bc4c00}
.o-judge_error,.o-recording_error{background:#fbefff;color:#6e2fbf}
.o-config_error,.o-queued{background:#eaeef2;color:#424a53}
.v-no_evidence{background:#ddf4ff;color:#0a3069}
.v-ungrounded{background:#ffebe9;color:#a40e26;outline:2px dashed #a40e26}
.pending{outline:2px dashed #9a6700}
td.cell a{color:inherit;text-decoration:none;display:block}
mark{padding:0 1px;border-radius:2px}mark sup{font-size:10px;margin-left:1px}
.passage{border-left:3px solid var(--line);padding:2px 8px;margin:4px 0;white-space:pre-wrap}
.response{background:var(--soft);padding:6px 10px;border-radius:4px;white-space:pre-wrap}
details.case{border:1px solid var(--line);border-radius:6px;margin:8px 0;padding:4px 10px}
details.case>summary{cursor:pointer;font-weight:600}
.error{white-space:pre-wrap;background:#fbefff;color:#6e2fbf;padding:6px 10px;border-radius:4px}
.filters{margin:8px 0;display:flex;flex-wrap:wrap;gap:12px;align-items:center}
.hidden{display:none}
svg text{font:11px system-ui,sans-serif;fill:#59636e}
.heat td.num{min-width:64px}
.wide{overflow-x:auto}.wide table{font-size:12.5px}.wide th,.wide td{padding:3px 5px}
"#;

/// The small script of the pages: outcome filters and a text filter over
/// elements marked `data-filter`, and opening the case a link points at.
/// It only hides and opens what the page already shows; without it every
/// row is shown and every case can still be opened by hand.
const SCRIPT: &str = r#"
(function(){
  var boxes=[].slice.call(document.querySelectorAll('input[data-outcome]'));
  var text=document.getElementById('filter-text');
  function apply(){
    var on={};boxes.forEach(function(b){on[b.getAttribute('data-outcome')]=b.checked;});
    var q=text?text.value.toLowerCase():'';
    document.querySelectorAll('[data-filter]').forEach(function(el){
      var outs=(el.getAttribute('data-outcomes')||'').split(' ');
      var shown=outs.some(function(o){return on[o]!==false;});
      if(q&&el.getAttribute('data-filter').toLowerCase().indexOf(q)<0)shown=false;
      el.classList.toggle('hidden',!shown);
    });
  }
  boxes.forEach(function(b){b.addEventListener('change',apply);});
  if(text)text.addEventListener('input',apply);
  function open(){
    var t=location.hash&&document.getElementById(decodeURIComponent(location.hash.slice(1)));
    while(t){if(t.tagName==='DETAILS')t.open=true;t=t.parentElement;}
  }
  window.addEventListener('hashchange',open);open();
})();
"#;

/// A whole page: `title`, then `body` (already HTML), with the shared style
/// and, when `script` is set, the shared script.
pub(crate) fn page(title: &str, body: &str, script: bool) -> String {
    let mut out = String::with_capacity(body.len() + STYLE.len() + SCRIPT.len() + 512);
    out.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // Nothing is loaded from anywhere: the policy says so to the browser.
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n");
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    out.push_str(body);
    if script {
        let _ = write!(out, "\n<script>{SCRIPT}</script>");
    }
    out.push_str("\n</body>\n</html>\n");
    out
}

/// A span of a text to mark: its byte range, the class of its `<mark>`, a
/// tooltip, and the numbered references shown after it (linked to `href`s).
#[derive(Clone, Debug)]
pub(crate) struct Mark {
    pub span: Range<usize>,
    pub class: String,
    pub title: String,
    /// `(label, href)`: shown as `[label]` linking to `#href`.
    pub refs: Vec<(String, String)>,
}

/// `text`, escaped, with `marks` as `<mark>` elements. Overlapping marks
/// are split where they overlap: each piece carries every reference that
/// covers it, and the class of the first mark that does. Ranges outside
/// the text or not on character boundaries are left out (never a panic).
pub(crate) fn marked(text: &str, marks: &[Mark]) -> String {
    let valid: Vec<&Mark> = marks
        .iter()
        .filter(|m| {
            m.span.start < m.span.end
                && m.span.end <= text.len()
                && text.is_char_boundary(m.span.start)
                && text.is_char_boundary(m.span.end)
        })
        .collect();
    let mut cuts: Vec<usize> = vec![0, text.len()];
    for m in &valid {
        cuts.push(m.span.start);
        cuts.push(m.span.end);
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = String::with_capacity(text.len() * 2);
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let piece = escape(&text[a..b]);
        let covering: Vec<&&Mark> = valid
            .iter()
            .filter(|m| m.span.start <= a && b <= m.span.end)
            .collect();
        let Some(first) = covering.first() else {
            out.push_str(&piece);
            continue;
        };
        let titles: Vec<&str> = covering.iter().map(|m| m.title.as_str()).collect();
        let _ = write!(
            out,
            "<mark class=\"{}\" title=\"{}\">{piece}",
            escape(&first.class),
            escape(&titles.join("; "))
        );
        // References once, at the end of the span they belong to.
        let ending: Vec<&(String, String)> = covering
            .iter()
            .filter(|m| m.span.end == b)
            .flat_map(|m| m.refs.iter())
            .collect();
        if !ending.is_empty() {
            out.push_str("<sup>");
            for (label, href) in ending {
                let _ = write!(out, "<a href=\"#{}\">[{}]</a>", escape(href), escape(label));
            }
            out.push_str("</sup>");
        }
        out.push_str("</mark>");
    }
    out
}

#[cfg(feature = "suite")]
/// A histogram of `scores` (each in [0, 1]) in ten bins, with the
/// threshold drawn as a dashed line, as inline SVG; its `<title>` and the
/// caption say the same in words.
pub(crate) fn histogram(scores: &[f64], threshold: f64, label: &str) -> String {
    const BINS: usize = 10;
    const W: f64 = 260.0;
    const H: f64 = 90.0;
    const PAD: f64 = 14.0;
    // Scores are finite by contract; anything else is left out, not drawn.
    let scores: Vec<f64> = scores.iter().copied().filter(|s| s.is_finite()).collect();
    let mut counts = [0usize; BINS];
    for &s in &scores {
        counts[((s.clamp(0.0, 1.0) * BINS as f64) as usize).min(BINS - 1)] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let below = scores.iter().filter(|&&s| s < threshold).count();
    let words = format!(
        "{label}: {} scores, {below} below the threshold {threshold:.2}",
        scores.len()
    );
    let bar_w = (W - 2.0 * PAD) / BINS as f64;
    let mut svg = format!(
        "<svg role=\"img\" width=\"{W}\" height=\"{}\" viewBox=\"0 0 {W} {}\"><title>{}</title>",
        H + 16.0,
        H + 16.0,
        escape(&words)
    );
    for (i, &n) in counts.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let h = (H - PAD) * n as f64 / top;
        let x = PAD + i as f64 * bar_w;
        let low = (i as f64 + 1.0) / BINS as f64 <= threshold;
        let _ = write!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{}\"><title>{} in {:.1}–{:.1}</title></rect>",
            x + 1.0,
            H - h,
            bar_w - 2.0,
            if low { "#cf222e" } else { "#2da44e" },
            n,
            i as f64 / BINS as f64,
            (i + 1) as f64 / BINS as f64
        );
    }
    let tx = PAD + threshold.clamp(0.0, 1.0) * (W - 2.0 * PAD);
    let _ = write!(
        svg,
        "<line x1=\"{PAD}\" y1=\"{H}\" x2=\"{}\" y2=\"{H}\" stroke=\"#59636e\"/>\
         <line x1=\"{tx:.1}\" y1=\"2\" x2=\"{tx:.1}\" y2=\"{H}\" stroke=\"#1f2328\" stroke-dasharray=\"3 2\"/>\
         <text x=\"{PAD}\" y=\"{}\">0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">1</text>\
         <text x=\"{:.1}\" y=\"10\" text-anchor=\"{}\">threshold {threshold:.2}</text></svg>",
        W - PAD,
        H + 12.0,
        W - PAD,
        H + 12.0,
        // Beside the line, on the side with room.
        if threshold > 0.5 { tx - 3.0 } else { tx + 3.0 },
        if threshold > 0.5 { "end" } else { "start" },
    );
    svg
}

#[cfg(feature = "calibration")]
/// An interval `lo..hi` around `value` on a -1..1 axis (kappa), as a small
/// inline SVG with the value in words in its `<title>`.
pub(crate) fn interval(value: Option<f64>, range: Option<(f64, f64)>, words: &str) -> String {
    const W: f64 = 140.0;
    let x = |k: f64| 6.0 + (k.clamp(-1.0, 1.0) + 1.0) / 2.0 * (W - 12.0);
    let mut svg = format!(
        "<svg role=\"img\" width=\"{W}\" height=\"22\" viewBox=\"0 0 {W} 22\"><title>{}</title>\
         <line x1=\"6\" y1=\"11\" x2=\"{}\" y2=\"11\" stroke=\"#d1d9e0\"/>\
         <line x1=\"{:.1}\" y1=\"5\" x2=\"{:.1}\" y2=\"17\" stroke=\"#d1d9e0\"/>",
        escape(words),
        W - 6.0,
        x(0.0),
        x(0.0)
    );
    if let Some((lo, hi)) = range {
        let _ = write!(
            svg,
            "<line x1=\"{:.1}\" y1=\"11\" x2=\"{:.1}\" y2=\"11\" stroke=\"#0969da\" stroke-width=\"3\"/>",
            x(lo),
            x(hi)
        );
    }
    if let Some(v) = value {
        let _ = write!(
            svg,
            "<circle cx=\"{:.1}\" cy=\"11\" r=\"4\" fill=\"#0a3069\"/>",
            x(v)
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(feature = "calibration")]
/// A background for a heat-map cell holding `share` (0 to 1) of its row:
/// white to a blue dark enough for white text above one half, so the
/// number printed in the cell stays readable.
pub(crate) fn heat(share: f64) -> (String, &'static str) {
    let s = if share.is_finite() {
        share.clamp(0.0, 1.0)
    } else {
        0.0
    };
    // From #ffffff to #0a3069.
    let mix = |to: f64| (255.0 + (to - 255.0) * s).round() as u8;
    let bg = format!("#{:02x}{:02x}{:02x}", mix(10.0), mix(48.0), mix(105.0));
    (bg, if s > 0.5 { "#ffffff" } else { "#1f2328" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_leaves_no_markup() {
        let evil = r#"<script>alert("x")</script> & 'q' <img src=x onerror=y>"#;
        let e = escape(evil);
        assert!(!e.contains('<') && !e.contains('>') && !e.contains('"') && !e.contains('\''));
        assert_eq!(
            escape("a < b & c"),
            "a &lt; b &amp; c",
            "text reads back as written"
        );
    }

    #[test]
    fn ids_are_safe_and_distinct() {
        assert_eq!(
            id(&["refund-gold", "faithfulness"]),
            "refund-.gold--faithfulness"
        );
        assert_ne!(id(&["a b"]), id(&["a_b"]));
        assert_ne!(id(&["a-", "b"]), id(&["a", "-b"]));
        assert!(
            id(&["\"><script>"])
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        );
    }

    #[test]
    fn marks_split_where_they_overlap_and_escape_their_text() {
        let text = "Refunds <take> 30 days. Returns are free.";
        let m = |span: Range<usize>, label: &str, class: &str| Mark {
            span,
            class: class.into(),
            title: format!("claim {label}"),
            refs: vec![(label.into(), format!("c{label}"))],
        };
        let html = marked(
            text,
            &[
                m(0..22, "1", "v-supported"),
                m(15..40, "2", "v-contradicted"),
            ],
        );
        assert!(
            html.starts_with(
                "<mark class=\"v-supported\" title=\"claim 1\">Refunds &lt;take&gt; </mark>"
            ),
            "{html}"
        );
        assert!(
            html.contains(
                "title=\"claim 1; claim 2\">30 days<sup><a href=\"#c1\">[1]</a></sup></mark>"
            ),
            "{html}"
        );
        assert!(html.contains("<a href=\"#c2\">[2]</a>"), "{html}");
        assert!(!html.contains("<take>"));
        // Out of range or inside a character: left out, no panic.
        let odd = marked("é", &[m(1..2, "x", "c"), m(0..9, "y", "c")]);
        assert_eq!(odd, "é");
    }

    #[test]
    fn charts_say_in_words_what_they_draw() {
        let svg = histogram(&[0.1, 0.5, 0.95, 1.0, f64::NAN], 0.7, "faithfulness");
        assert!(
            svg.contains("<title>faithfulness: 4 scores, 2 below the threshold 0.70</title>"),
            "{svg}"
        );
        assert!(svg.contains("threshold 0.70"));
        let i = interval(Some(0.4), Some((0.2, 0.6)), "kappa 0.40 (0.20 to 0.60)");
        assert!(i.contains("<title>kappa 0.40 (0.20 to 0.60)</title>"));
        assert_eq!(heat(0.0).0, "#ffffff");
        assert_eq!(heat(1.0), ("#0a3069".to_owned(), "#ffffff"));
        assert_eq!(heat(f64::NAN).0, "#ffffff");
    }
}

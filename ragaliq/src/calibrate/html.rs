//! The calibration's page (`cargo ragaliq calibrate --html FILE`): the
//! judges side by side (kappa with its interval, undecided, not verified,
//! calls, tokens, cost), then per judge the confusion matrices as heat
//! maps, per-label precision and recall, per-area agreement, and every
//! disagreement and undecided claim with its passages, the judge's evidence
//! marked where it was found, and the person's note.

use super::report::{CalibrationReport, Disagreement, JudgeResult};
use crate::evidence::{self, Grounding};
use crate::html::{self, Mark, escape, id};
use crate::stats::AgreementStats;
use std::fmt::Write as _;

pub(super) fn page(r: &CalibrationReport) -> String {
    let mut body = String::new();
    let labels: Vec<String> = r.labels.iter().map(|(l, n)| format!("{l} {n}")).collect();
    let _ = writeln!(
        body,
        "<h1>ragaliq calibration: agreement with {} labelled claims</h1>\n<p class=\"muted\">{} areas · the person's labels: {}</p>",
        r.claims,
        r.areas.len(),
        escape(&labels.join(", "))
    );
    body.push_str("<h2 id=\"judges\">Judges</h2>\n");
    // Said before any kappa, as the console and Markdown say it.
    for j in &r.judges {
        for why in [j.cannot_separate(r.kind), j.no_better_than_plain()]
            .into_iter()
            .flatten()
        {
            let _ = writeln!(
                body,
                "<p class=\"error\">judge <code>{}</code> {}</p>",
                escape(&j.name),
                escape(&why)
            );
        }
    }
    body.push_str("<p class=\"muted\">Agreement counts decided claims only; undecided claims (samples split, or evidence in no passage: ungrounded) and claims not verified are counted apart. Kappa's 95% interval resamples groups of claims that share passages and judge calls.</p>\n");
    body.push_str("<div class=\"wide\"><table><tr><th>judge</th><th class=\"num\">samples</th><th class=\"num\">decided</th><th class=\"num\">AUC</th><th class=\"num\">undecided (ungrounded)</th><th class=\"num\">not verified</th><th class=\"num\">accuracy</th><th>kappa, four verdicts (95% CI)</th><th>kappa, supported / not (95% CI)</th><th class=\"num\">macro-F1</th><th class=\"num\">calls (replayed)</th><th class=\"num\">tokens</th><th class=\"num\">cost, time</th></tr>\n");
    for j in &r.judges {
        let _ = writeln!(
            body,
            "<tr><th><a href=\"#{}\">{}</a></th><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} ({})</td><td class=\"num{}\">{}</td><td class=\"num\">{:.3}</td><td>{}</td><td>{}</td><td class=\"num\">{:.3}</td><td class=\"num\">{} ({})</td><td class=\"num\">{}</td><td class=\"num\">{}<br>{:.1} s</td></tr>",
            id(&["judge", &j.name]),
            escape(&j.name),
            escape(&j.samples),
            j.judged,
            j.auc.map_or_else(|| "—".to_owned(), |a| format!("{a:.3}")),
            j.undecided,
            j.ungrounded,
            if j.not_judged.is_empty() {
                ""
            } else {
                " o-judge_error"
            },
            j.not_judged.len(),
            j.verdicts.accuracy,
            kappa_cell(&j.verdicts),
            kappa_cell(&j.collapsed),
            j.verdicts.macro_f1,
            j.usage.calls,
            j.usage.replayed,
            j.usage
                .total_tokens()
                .saturating_add(j.usage.replayed_tokens),
            j.cost_usd
                .map_or_else(|| "unknown".to_owned(), |c| format!("${c:.4}")),
            j.seconds
        );
    }
    body.push_str("</table></div>\n");
    if let Some(floor) = r.min_kappa {
        let _ = writeln!(body, "<p>kappa floor: {floor:.2}</p>");
    }
    for f in r.failures() {
        let _ = writeln!(body, "<p class=\"error\">FAILED: {}</p>", escape(&f));
    }
    for j in &r.judges {
        judge_section(&mut body, j);
    }
    html::page(
        &format!("ragaliq calibration: {} labelled claims", r.claims),
        &body,
        true,
    )
}

fn kappa_words(stats: &AgreementStats) -> String {
    match (stats.kappa, stats.kappa_interval) {
        (Some(k), Some((lo, hi))) => format!("{k:.3} ({lo:.3} to {hi:.3})"),
        (Some(k), None) => format!("{k:.3}"),
        (None, _) => "undefined".to_owned(),
    }
}

fn kappa_cell(stats: &AgreementStats) -> String {
    let words = kappa_words(stats);
    format!(
        "<span class=\"mono\">{}</span><br>{}",
        escape(&words),
        html::interval(stats.kappa, stats.kappa_interval, &format!("kappa {words}"))
    )
}

/// A confusion matrix as a heat map: each cell shaded by its share of the
/// person's row, its count always printed, recall and precision beside.
fn heat_map(body: &mut String, stats: &AgreementStats, caption: &str) {
    let _ = write!(
        body,
        "<table class=\"heat\"><caption class=\"muted\">{}: rows the person's label, columns the judge's (shade: share of the row)</caption><tr><th>person \\ judge</th>",
        escape(caption)
    );
    for l in &stats.labels {
        let _ = write!(body, "<th class=\"num\">{}</th>", escape(l));
    }
    body.push_str("<th class=\"num\">recall</th></tr>\n");
    for (row, l) in stats.confusion.iter().zip(&stats.per_label) {
        let total: u64 = row.iter().fold(0u64, |sum, n| sum.saturating_add(*n));
        let _ = write!(body, "<tr><th>{}</th>", escape(&l.label));
        for (c, &n) in row.iter().enumerate() {
            let share = if total == 0 {
                0.0
            } else {
                n as f64 / total as f64
            };
            let (bg, fg) = html::heat(share);
            let diagonal = stats.per_label[c].label == l.label;
            let _ = write!(
                body,
                "<td class=\"num\" style=\"background:{bg};color:{fg}\" title=\"{} of {total} ({:.0}%){}\">{n}{}</td>",
                n,
                share * 100.0,
                if diagonal { ", agreeing" } else { "" },
                if diagonal { " ✓" } else { "" }
            );
        }
        let _ = writeln!(body, "<td class=\"num\">{}</td></tr>", ratio(l.recall));
    }
    body.push_str("<tr><th>precision</th>");
    for l in &stats.per_label {
        let _ = write!(body, "<td class=\"num\">{}</td>", ratio(l.precision));
    }
    body.push_str("<td></td></tr></table>\n");
}

fn ratio(x: Option<f64>) -> String {
    x.map_or_else(|| "—".to_owned(), |x| format!("{x:.2}"))
}

fn judge_section(body: &mut String, j: &JudgeResult) {
    let _ = writeln!(
        body,
        "<h2 id=\"{}\">{}</h2>\n<p class=\"muted\">{} · samples {}</p>",
        id(&["judge", &j.name]),
        escape(&j.name),
        escape(&j.judge),
        escape(&j.samples)
    );
    body.push_str("<div class=\"cards\"><div class=\"card\">");
    heat_map(body, &j.verdicts, "four verdicts");
    body.push_str("</div><div class=\"card\">");
    heat_map(body, &j.collapsed, "supported / not supported");
    body.push_str("</div></div>\n");
    body.push_str("<h3>Per label</h3><table><tr><th>label</th><th class=\"num\">person gave</th><th class=\"num\">judge gave</th><th class=\"num\">precision</th><th class=\"num\">recall</th><th class=\"num\">F1</th></tr>\n");
    for l in &j.verdicts.per_label {
        let _ = writeln!(
            body,
            "<tr><th>{}</th><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2}</td></tr>",
            escape(&l.label),
            l.support,
            l.predicted,
            ratio(l.precision),
            ratio(l.recall),
            l.f1
        );
    }
    body.push_str("</table>\n<h3>Per area</h3><table><tr><th>area</th><th class=\"num\">decided</th><th class=\"num\">agreeing</th><th>share agreeing</th><th class=\"num\">undecided</th></tr>\n");
    for a in &j.areas {
        let share = if a.claims == 0 {
            0.0
        } else {
            a.agreeing as f64 / a.claims as f64
        };
        let _ = writeln!(
            body,
            "<tr><th>{}</th><td class=\"num\">{}</td><td class=\"num\">{}</td><td><span style=\"display:inline-block;width:{:.0}px;height:10px;background:#0969da\"></span> {:.0}%</td><td class=\"num\">{}</td></tr>",
            escape(&a.area),
            a.claims,
            a.agreeing,
            share * 120.0,
            share * 100.0,
            a.undecided
        );
    }
    body.push_str("</table>\n");
    if !j.not_judged.is_empty() {
        let _ = writeln!(body, "<h3>Not verified: {}</h3><ul>", j.not_judged.len());
        for n in &j.not_judged {
            let _ = writeln!(
                body,
                "<li><code>{}</code> <span class=\"muted\">{}</span><div class=\"error\">{}</div></li>",
                escape(&n.id),
                escape(&n.place),
                escape(&n.error)
            );
        }
        body.push_str("</ul>\n");
    }
    for (title, list) in [
        ("Disagreements", &j.disagreements),
        ("Undecided", &j.undecided_claims),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(body, "<h3>{title}: {}</h3>", list.len());
        for d in list {
            claim_details(body, &j.name, d);
        }
    }
}

fn claim_details(body: &mut String, judge: &str, d: &Disagreement) {
    let why = if d.ungrounded {
        format!(
            "<span class=\"v-ungrounded\">? undecided: said {} but its evidence is in no passage</span>",
            escape(&d.verdict)
        )
    } else if d.undecided {
        format!(
            "<span class=\"o-undecided\">? undecided: samples split{}, leaning {}</span>",
            d.agreement
                .as_deref()
                .map(|a| format!(" ({})", escape(a)))
                .unwrap_or_default(),
            escape(&d.verdict)
        )
    } else {
        format!(
            "judge <span class=\"v-{}\">{}</span>{}",
            escape(&d.verdict),
            escape(&d.verdict),
            d.agreement
                .as_deref()
                .map(|a| format!(" ({} agree)", escape(a)))
                .unwrap_or_default()
        )
    };
    let _ = writeln!(
        body,
        "<details class=\"case\" id=\"{}\"><summary><code>{}</code> {} — person <span class=\"v-{}\">{}</span>, {why}</summary>",
        id(&[judge, &d.id]),
        escape(&d.id),
        escape(&d.claim),
        escape(&d.label),
        escape(&d.label)
    );
    let _ = writeln!(
        body,
        "<p class=\"muted mono\">{} · area {}</p>",
        escape(&d.place),
        escape(&d.area)
    );
    if let Some(note) = &d.note {
        let _ = writeln!(body, "<p><b>The person's note</b> {}</p>", escape(note));
    }
    // The judge's evidence, marked where it was found.
    let mut marks: Vec<Vec<Mark>> = vec![Vec::new(); d.passages.len()];
    if let Some(p) = d.evidence_in.filter(|p| (1..=d.passages.len()).contains(p))
        && let Grounding::Found(f) = evidence::locate(&d.evidence, &d.passages[p - 1..p])
    {
        marks[p - 1].push(Mark {
            span: f.span,
            class: format!("v-{}", d.verdict),
            title: format!("the judge's evidence ({})", d.verdict),
            refs: Vec::new(),
        });
    }
    match (d.evidence.trim().is_empty(), d.evidence_in) {
        (true, _) => {
            body.push_str("<p><b>Evidence</b> <span class=\"muted\">none given</span></p>\n")
        }
        (false, Some(p)) => {
            let _ = writeln!(
                body,
                "<p><b>Evidence</b> P{p} “{}”</p>",
                escape(&d.evidence)
            );
        }
        (false, None) => {
            let _ = writeln!(
                body,
                "<p><b>Evidence</b> <span class=\"v-ungrounded\">in no passage:</span> “{}”</p>",
                escape(&d.evidence)
            );
        }
    }
    body.push_str("<ol>");
    for (i, p) in d.passages.iter().enumerate() {
        let _ = write!(
            body,
            "<li><div class=\"passage\">{}</div></li>",
            html::marked(p, &marks[i])
        );
    }
    body.push_str("</ol></details>\n");
}

// The page is rendered here, from the report's data: the report module
// knows nothing of HTML, so the two never import each other.
impl CalibrationReport {
    /// The report as one self-contained HTML page: the judges side by side,
    /// then per judge the confusion matrices as heat maps, per-label and
    /// per-area agreement, and every disagreement and undecided claim with
    /// its passages and the person's note (`cargo ragaliq calibrate --html`).
    #[must_use]
    pub fn to_html(&self) -> String {
        page(self)
    }
}

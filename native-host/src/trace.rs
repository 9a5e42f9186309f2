//! Tracing of the crawl: `RUST_LOG` prints the core's spans and events on stderr (as
//! `tracing-subscriber`'s env filter reads it), and `forager crawl --trace` adds a phase
//! summary at the end: how often each step of the loop and each phase of a fetch ran, for
//! how long in total and on average. Without either nothing is installed, so the spans in
//! the core cost one relaxed load each.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tracing::span::{Attributes, Id};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Registry};

/// Time spent in each span name: (times closed, total time from creation to close).
#[derive(Default)]
pub(crate) struct Phases(Mutex<HashMap<&'static str, (u64, Duration)>>);

/// The summary of the `--trace` run, once installed.
static PHASES: OnceLock<Arc<Phases>> = OnceLock::new();

/// When a span was created (kept in the span's extensions).
struct Opened(Instant);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for SummaryLayer {
    fn on_new_span(&self, _: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Opened(Instant::now()));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(Opened(at)) = span.extensions_mut().remove::<Opened>() else {
            return;
        };
        let mut m = self.0 .0.lock().unwrap_or_else(|p| p.into_inner());
        let e = m.entry(span.metadata().name()).or_default();
        e.0 += 1;
        e.1 += at.elapsed();
    }
}

/// The layer that sums span times into [`Phases`].
struct SummaryLayer(Arc<Phases>);

/// Installs the subscriber: `RUST_LOG` events and spans on stderr when set, and with `summary`
/// the phase summary of the crawl's spans (`forager_core` at debug level, or as `RUST_LOG`
/// says). Nothing is installed when neither is asked for.
pub(crate) fn init(summary: bool) {
    let env = std::env::var("RUST_LOG").ok().filter(|s| !s.is_empty());
    if env.is_none() && !summary {
        return;
    }
    let fmt = env.as_ref().map(|e| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
            .with_filter(EnvFilter::new(e))
    });
    let sum = summary.then(|| {
        let phases = PHASES.get_or_init(Arc::default).clone();
        let filter = EnvFilter::new(env.as_deref().unwrap_or("forager_core=debug"));
        SummaryLayer(phases).with_filter(filter)
    });
    let _ = Registry::default().with(fmt).with(sum).try_init();
}

/// The phase summary of the spans closed so far, one line a phase sorted by name, or `None`
/// when `--trace` was not given.
pub(crate) fn summary() -> Option<String> {
    let phases = PHASES.get()?;
    let m = phases.0.lock().unwrap_or_else(|p| p.into_inner());
    let mut rows: Vec<_> = m.iter().collect();
    rows.sort_by_key(|(name, _)| **name);
    let mut out = String::from(
        "phase summary (wall time from a span's start to its end, summed over concurrent fetches):\n",
    );
    out.push_str(&format!(
        "  {:<18} {:>9} {:>11} {:>11}\n",
        "phase", "count", "total s", "mean ms"
    ));
    for (name, (n, total)) in rows {
        out.push_str(&format!(
            "  {:<18} {:>9} {:>11.3} {:>11.3}\n",
            name,
            n,
            total.as_secs_f64(),
            total.as_secs_f64() * 1e3 / (*n).max(1) as f64
        ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_closed_spans_by_name() {
        let phases = Arc::new(Phases::default());
        let sub = Registry::default().with(SummaryLayer(phases.clone()));
        tracing::subscriber::with_default(sub, || {
            for _ in 0..3 {
                let _g = tracing::debug_span!("fetch.parse").entered();
                std::thread::sleep(Duration::from_millis(2));
            }
            drop(tracing::debug_span!("loop.record"));
        });
        let m = phases.0.lock().unwrap();
        let (n, total) = m["fetch.parse"];
        assert_eq!(n, 3);
        assert!(total >= Duration::from_millis(6), "{total:?}");
        assert_eq!(m["loop.record"].0, 1);
        assert!(!m.contains_key("fetch.body"));
    }
}

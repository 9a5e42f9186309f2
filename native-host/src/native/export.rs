//! Byte streams sent to the browser in base64 chunks: the model (`get_model`) and the crawl's
//! exports (`export`: lists, the HTML report, the WARC archive).

use super::*;

/// The chunk of `bytes` at `offset` as `get_model` and `export` reply with it (base64, at
/// most `MODEL_CHUNK` bytes); `what` names it in the refusal of an offset past its end.
pub(super) fn chunk(bytes: &[u8], offset: u64, what: &str) -> Result<Reply, Refusal> {
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let end = start.saturating_add(MODEL_CHUNK).min(bytes.len());
    chunk_reply(bytes.len() as u64, offset, &bytes[start..end], what)
}

/// The reply of one chunk, `data`, at `offset` of `total` bytes.
fn chunk_reply(total: u64, offset: u64, data: &[u8], what: &str) -> Result<Reply, Refusal> {
    if offset > total {
        return Err(Refusal::Invalid(format!("offset beyond the {what}")));
    }
    Ok(Reply::Chunk {
        total,
        offset,
        data: base64::engine::general_purpose::STANDARD.encode(data),
    })
}

/// One chunk of an export: the WARC archive's bytes, or a list or report as text.
pub(super) fn export(
    paths: &HostPaths,
    what: protocol::ExportWhat,
    format: Option<crate::export::Format>,
    offset: u64,
) -> Result<Reply, Refusal> {
    if what == protocol::ExportWhat::Warc {
        let (total, data) = off_the_runtime(|| {
            crate::warc::joined_range(&paths.warc_prefix(), offset, MODEL_CHUNK)
        })
        .map_err(|e| Refusal::Failed(format!("reading the WARC archive: {e}")))?;
        if total == 0 {
            return Err(Refusal::Missing(
                "no WARC archive yet: start a crawl with \"Record WARC\"".into(),
            ));
        }
        return chunk_reply(total, offset, &data, "export");
    }
    let text = off_the_runtime(|| export_text(paths, what, format))?;
    chunk(text.as_bytes(), offset, "export")
}

/// The text `export` sends: a list as CSV or JSON Lines, or the HTML report.
fn export_text(
    paths: &HostPaths,
    what: protocol::ExportWhat,
    format: Option<crate::export::Format>,
) -> Result<String, Refusal> {
    use crate::export::What;
    use protocol::ExportWhat as W;
    if !paths.has_crawl() {
        return Err(Refusal::Missing(
            "there is no crawl yet: start one first".into(),
        ));
    }
    let db = read_only(paths)?;
    let list = match what {
        W::Hubs => What::Hubs,
        W::Authorities => What::Authorities,
        W::Pages => What::Pages,
        W::Warc => return Err(Refusal::Invalid("the WARC archive is sent as bytes".into())),
        W::Report => {
            let r = crate::report::build(&*db, 20)?;
            return Ok(crate::report::html(&r, "Forager crawl report"));
        }
    };
    let format = format.ok_or_else(|| Refusal::Invalid("give a format: csv or jsonl".into()))?;
    crate::export::export(&*db, list, format).map_err(|e| Refusal::Failed(e.to_string()))
}

//! [`Tables`] on PostgreSQL: whole rows read a page at a time in key order and written with
//! a binary `COPY` each batch; at the end the identity sequences and the fetch sequence move
//! past the copied ids (the search index, where the schema has one, follows the rows).

use super::{Conn, PgStore};
use crate::store::copy::{meta_from_text, own_meta, Kind, Table, Tables, Value, OWN_META};
use crate::store::{now, Result, StoreError};
use r2d2_postgres::postgres::binary_copy::BinaryCopyInWriter;
use r2d2_postgres::postgres::types::{ToSql, Type};
use r2d2_postgres::postgres::Row;

/// The column type `kind` is stored as.
fn pg_type(kind: Kind) -> Type {
    match kind {
        Kind::Int => Type::INT8,
        Kind::Real => Type::FLOAT8,
        Kind::Text => Type::TEXT,
        Kind::Blob => Type::BYTEA,
    }
}

/// `v` as a parameter of a `kind` column (a NULL typed as the column).
fn param(v: &Value, kind: Kind) -> Result<Box<dyn ToSql + Sync>> {
    let wrong = || StoreError::Schema(format!("a {v:?} where a {kind:?} column goes"));
    Ok(match (kind, v) {
        (Kind::Int, Value::Null) => Box::new(None::<i64>),
        (Kind::Real, Value::Null) => Box::new(None::<f64>),
        (Kind::Text, Value::Null) => Box::new(None::<String>),
        (Kind::Blob, Value::Null) => Box::new(None::<Vec<u8>>),
        (Kind::Int, Value::Int(i)) => Box::new(*i),
        (Kind::Real, Value::Real(x)) => Box::new(*x),
        // SQLite may keep a whole number in a REAL column as an integer.
        (Kind::Real, Value::Int(i)) => Box::new(*i as f64),
        (Kind::Text, Value::Text(t)) => Box::new(t.clone()),
        (Kind::Blob, Value::Blob(b)) => Box::new(b.clone()),
        _ => return Err(wrong()),
    })
}

/// Column `i` of `row` read as `kind`.
fn value(row: &Row, i: usize, kind: Kind) -> Result<Value> {
    let v = match kind {
        Kind::Int => row.try_get::<_, Option<i64>>(i)?.map(Value::Int),
        Kind::Real => row.try_get::<_, Option<f64>>(i)?.map(Value::Real),
        Kind::Text => row.try_get::<_, Option<String>>(i)?.map(Value::Text),
        Kind::Blob => row.try_get::<_, Option<Vec<u8>>>(i)?.map(Value::Blob),
    };
    Ok(v.unwrap_or(Value::Null))
}

/// Reads a page of `table`'s rows after `after`.
fn read_rows(
    c: &mut Conn,
    table: &Table,
    after: Option<&[Value]>,
    limit: usize,
) -> Result<Vec<Vec<Value>>> {
    let keys = table.key_list();
    let mut params = Vec::new();
    let filter = match after {
        Some(k) => {
            for (v, col) in k.iter().zip(table.columns) {
                params.push(param(v, col.1)?);
            }
            let marks: Vec<String> = (1..=k.len()).map(|i| format!("${i}")).collect();
            format!("WHERE ({keys}) > ({})", marks.join(", "))
        }
        None => String::new(),
    };
    let sql = format!(
        "SELECT {} FROM {} {filter} ORDER BY {keys} LIMIT {}",
        table.column_list(),
        table.name,
        super::limit(limit)
    );
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
    let rows = c.query(sql.as_str(), &refs)?;
    rows.iter()
        .map(|r| {
            (table.columns.iter().enumerate())
                .map(|(i, col)| value(r, i, col.1))
                .collect()
        })
        .collect()
}

/// Writes `rows` into `table` with one binary `COPY`, in one transaction.
fn write_rows(c: &mut Conn, table: &Table, rows: &[Vec<Value>]) -> Result<()> {
    let mut tx = c.transaction()?;
    let types: Vec<Type> = table.columns.iter().map(|c| pg_type(c.1)).collect();
    let sink = tx.copy_in(&format!(
        "COPY {}({}) FROM STDIN BINARY",
        table.name,
        table.column_list()
    ))?;
    let mut w = BinaryCopyInWriter::new(sink, &types);
    for r in rows {
        let params = (r.iter().zip(table.columns))
            .map(|(v, col)| param(v, col.1))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p.as_ref()).collect();
        w.write(&refs)?;
    }
    w.finish()?;
    Ok(tx.commit()?)
}

impl Tables for PgStore {
    fn rows(
        &self,
        table: &Table,
        after: Option<&[Value]>,
        limit: usize,
    ) -> Result<Vec<Vec<Value>>> {
        self.with(|c| read_rows(c, table, after, limit))
    }

    fn insert(&mut self, table: &Table, rows: &[Vec<Value>]) -> Result<()> {
        self.with(|c| write_rows(c, table, rows))
    }

    fn meta_values(&self) -> Result<Vec<(String, Value)>> {
        self.with(|c| {
            let sql = format!(
                "SELECT key, value, blob FROM meta WHERE key NOT IN {OWN_META} ORDER BY key"
            );
            let rows = c.query(sql.as_str(), &[])?;
            rows.iter()
                .map(|r| {
                    let key: String = r.try_get(0)?;
                    let text: Option<String> = r.try_get(1)?;
                    let blob: Option<Vec<u8>> = r.try_get(2)?;
                    let v = match (blob, text) {
                        (Some(b), _) => Value::Blob(b),
                        (None, Some(t)) => meta_from_text(t),
                        (None, None) => Value::Null,
                    };
                    Ok((key, v))
                })
                .collect()
        })
    }

    fn set_meta_values(&mut self, values: &[(String, Value)]) -> Result<()> {
        self.with(|c| {
            let mut tx = c.transaction()?;
            for (k, v) in values.iter().filter(|(k, _)| !own_meta(k)) {
                let (text, blob) = match v {
                    Value::Null => (None, None),
                    Value::Int(i) => (Some(i.to_string()), None),
                    Value::Real(x) => (Some(x.to_string()), None),
                    Value::Text(t) => (Some(t.clone()), None),
                    Value::Blob(b) => (None, Some(b.clone())),
                };
                tx.execute(
                    "INSERT INTO meta(key, value, blob) VALUES($1, $2, $3)
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value, blob = excluded.blob",
                    &[k, &text, &blob],
                )?;
            }
            Ok(tx.commit()?)
        })
    }

    fn is_empty(&self) -> Result<bool> {
        self.with(|c| {
            let sql = format!(
                "SELECT (SELECT count(*) FROM doc) + (SELECT count(*) FROM taxonomy)
                   + (SELECT count(*) FROM meta WHERE key NOT IN {OWN_META})"
            );
            let n: i64 = c.query_one(sql.as_str(), &[])?.try_get(0)?;
            Ok(n == 0)
        })
    }

    fn clear(&mut self) -> Result<()> {
        self.with(|c| {
            let tables: Vec<&str> = crate::store::copy::TABLES.iter().map(|t| t.name).collect();
            c.batch_execute(&format!(
                "BEGIN; TRUNCATE {}, worker RESTART IDENTITY CASCADE;
                 DO $$ BEGIN IF to_regclass('page_search') IS NOT NULL THEN
                   EXECUTE 'TRUNCATE page_search'; END IF; END $$;
                 DELETE FROM meta WHERE key NOT IN {OWN_META}; COMMIT",
                tables.join(", ")
            ))?;
            Ok(())
        })
    }

    fn live_workers(&self) -> Result<Vec<String>> {
        self.with(|c| {
            let rows = c.query(
                "SELECT name FROM worker WHERE lease_until >= $1 ORDER BY name",
                &[&now()],
            )?;
            rows.iter().map(|r| Ok(r.try_get(0)?)).collect()
        })
    }

    fn finish(&mut self) -> Result<()> {
        self.with(|c| {
            c.batch_execute(
                "SELECT setval(pg_get_serial_sequence('doc', 'oid'), coalesce(max(oid), 0) + 1, false) FROM doc;
                 SELECT setval(pg_get_serial_sequence('server', 'sid'), coalesce(max(sid), 0) + 1, false) FROM server;
                 SELECT setval('fetch_seq', coalesce(max(fetch_seq), 0) + 1, false) FROM doc;
                 DELETE FROM meta WHERE key = 'search_index';
                 DELETE FROM job_state;",
            )?;
            Ok(())
        })
    }
}

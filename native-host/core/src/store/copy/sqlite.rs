//! [`Tables`] on a SQLite crawl file: whole rows in and out, the search index built from the
//! copied pages at the end.

use super::{own_meta, Kind, Table, Tables, Value, OWN_META};
use crate::store::{features, search, Result, Store};
use rusqlite::types::{ToSqlOutput, ValueRef};

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(x) => ToSqlOutput::Borrowed(ValueRef::Real(*x)),
            Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

/// Column `i` of `row` read as `kind`.
fn value(row: &rusqlite::Row, i: usize, kind: Kind) -> rusqlite::Result<Value> {
    let v = match kind {
        Kind::Int => row.get::<_, Option<i64>>(i)?.map(Value::Int),
        Kind::Real => row.get::<_, Option<f64>>(i)?.map(Value::Real),
        Kind::Text => row.get::<_, Option<String>>(i)?.map(Value::Text),
        Kind::Blob => row.get::<_, Option<Vec<u8>>>(i)?.map(Value::Blob),
    };
    Ok(v.unwrap_or(Value::Null))
}

/// A value as SQLite stored it, whatever its type (`meta`'s values have none).
fn any_value(v: ValueRef) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(x) => Value::Real(x),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// Where `table` has the links' features (stored through the dictionary here).
fn features_column(table: &Table) -> Option<usize> {
    (table.name == super::LINK.name)
        .then(|| table.columns.iter().position(|c| c.0 == "features"))
        .flatten()
}

/// `?1, ?2, ... ?n`.
fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Tables for Store {
    fn rows(
        &self,
        table: &Table,
        after: Option<&[Value]>,
        limit: usize,
    ) -> Result<Vec<Vec<Value>>> {
        let keys = table.key_list();
        let filter = match after {
            Some(k) => format!("WHERE ({keys}) > ({})", placeholders(k.len())),
            None => String::new(),
        };
        let sql = format!(
            "SELECT {} FROM {} {filter} ORDER BY {keys} LIMIT {limit}",
            table.column_list(),
            table.name
        );
        let mut st = self.conn.prepare(&sql)?;
        let params = rusqlite::params_from_iter(after.unwrap_or(&[]));
        let rows = st.query_map(params, |r| {
            (table.columns.iter().enumerate())
                .map(|(i, c)| value(r, i, c.1))
                .collect::<rusqlite::Result<Vec<Value>>>()
        })?;
        let mut rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        // The copy moves link features in the four-byte form, which every back-end reads.
        if let Some(i) = features_column(table) {
            for r in &mut rows {
                if let Value::Blob(b) = &r[i] {
                    r[i] = match self.features.decode(b) {
                        Some(f) => Value::Blob(features::raw::encode(&f)),
                        None => Value::Null,
                    };
                }
            }
        }
        Ok(rows)
    }

    fn insert(&mut self, table: &Table, rows: &[Vec<Value>]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let sql = format!(
                "INSERT INTO {}({}) VALUES({})",
                table.name,
                table.column_list(),
                placeholders(table.columns.len())
            );
            let mut st = tx.prepare(&sql)?;
            let column = features_column(table);
            self.features.sync(&tx)?;
            let mut added = Vec::new();
            for r in rows {
                match column.map(|i| (i, &r[i])) {
                    Some((i, Value::Blob(b))) => {
                        let mut r = r.clone();
                        let f = features::raw::decode(b);
                        r[i] = Value::Blob(self.features.encode(&f, &mut added));
                        st.execute(rusqlite::params_from_iter(&r))?;
                    }
                    _ => {
                        st.execute(rusqlite::params_from_iter(r))?;
                    }
                }
            }
            features::store_added(&tx, &added)?;
        }
        tx.commit()?;
        Ok(())
    }

    fn meta_values(&self) -> Result<Vec<(String, Value)>> {
        let sql = format!("SELECT key, value FROM meta WHERE key NOT IN {OWN_META} ORDER BY key");
        let mut st = self.conn.prepare(&sql)?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, any_value(r.get_ref(1)?))))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn set_meta_values(&mut self, values: &[(String, Value)]) -> Result<()> {
        let tx = self.conn.transaction()?;
        for (k, v) in values.iter().filter(|(k, _)| !own_meta(k)) {
            tx.execute(
                "INSERT INTO meta(key, value) VALUES(?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                rusqlite::params![k, v],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    fn is_empty(&self) -> Result<bool> {
        let sql = format!(
            "SELECT (SELECT count(*) FROM doc) + (SELECT count(*) FROM taxonomy)
               + (SELECT count(*) FROM meta WHERE key NOT IN {OWN_META})"
        );
        let n: i64 = self.conn.query_row(&sql, [], |r| r.get(0))?;
        Ok(n == 0)
    }

    fn clear(&mut self) -> Result<()> {
        let tx = self.conn.transaction()?;
        // Pages before their hosts (foreign keys).
        for t in super::TABLES.iter().rev() {
            tx.execute(&format!("DELETE FROM {}", t.name), [])?;
        }
        tx.execute("DELETE FROM worker", [])?;
        tx.execute(&format!("DELETE FROM meta WHERE key NOT IN {OWN_META}"), [])?;
        tx.commit()?;
        self.caches = Default::default();
        Ok(())
    }

    fn live_workers(&self) -> Result<Vec<String>> {
        // One writer: the store holds the file's lock, so no crawl runs on it.
        Ok(Vec::new())
    }

    fn finish(&mut self) -> Result<()> {
        search::build_index(&mut self.conn, |_, _| {})?;
        self.seq = self
            .conn
            .query_row("SELECT coalesce(max(fetch_seq), 0) FROM doc", [], |r| {
                r.get(0)
            })?;
        self.caches = Default::default();
        Ok(())
    }
}

-- Searching the harvest (#30): a `tsvector` per fetched page (title weighted A, text B),
-- written in the same transaction that records the fetch, with a GIN index. The words are
-- stemmed by Snowball's English stemmer with no stop words (as the SQLite index's Porter
-- stemmer, which keeps every word: "the who" is a query that finds pages).
CREATE TEXT SEARCH DICTIONARY forager_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION forager (COPY = pg_catalog.english);
ALTER TEXT SEARCH CONFIGURATION forager
  ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
  WITH forager_stem;
CREATE TABLE page_search(oid BIGINT PRIMARY KEY, tsv TSVECTOR NOT NULL);
CREATE INDEX page_search_words ON page_search USING gin(tsv);

"""Reads a .warc.gz with warcio, an independent WARC reader, and checks every digest.

Prints one JSON object: the records by type, the target URIs of responses by HTTP status,
whether each record is its own gzip member, and any digest problems. Exit status 1 when a
digest is wrong or the file does not parse.
"""
import json
import sys

from warcio.archiveiterator import ArchiveIterator


def main(path):
    by_type = {}
    responses = {}
    problems = []
    offsets = []
    with open(path, 'rb') as f:
        it = ArchiveIterator(f, check_digests='raise')
        for rec in it:
            t = rec.rec_type
            by_type[t] = by_type.get(t, 0) + 1
            # Reading the whole content makes warcio compare both digests.
            rec.content_stream().read()
            if t == 'response':
                status = rec.http_headers.get_statuscode()
                uri = rec.rec_headers.get_header('WARC-Target-URI')
                responses.setdefault(status, []).append(uri)
            offsets.append(it.get_record_offset())
            if rec.digest_checker.problems:
                problems.extend(rec.digest_checker.problems)
    print(json.dumps({'types': by_type, 'responses': responses, 'problems': problems,
                      'members': len(set(offsets)), 'records': len(offsets)}))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))

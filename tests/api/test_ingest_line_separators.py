"""JSON Lines are split on newline only: a string holding U+2028 or U+0085 (valid JSON, accepted by
the file importer) stays one line at the ingest endpoint too."""

import json

from api.ingest import decode_lines


def test_unicode_line_separators_inside_strings_do_not_split_a_record():
    rec = {"schema": "cake-evidence/1", "kind": "run", "run_id": "r", "note": "a\u2028b\x85c\u2029d"}
    body = (json.dumps(rec, ensure_ascii=False) + "\n" + json.dumps(rec, ensure_ascii=False) + "\n").encode()
    lines = [ln for ln in decode_lines(body) if ln.strip()]
    assert len(lines) == 2
    assert json.loads(lines[0]) == rec

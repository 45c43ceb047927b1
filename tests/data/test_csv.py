"""CSV reader: problems name the file, the row (header = row 1) and the column."""

import numpy as np
import pytest

from pcevolve.data import DataError, read_labeled_csv


def _write(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _problems(excinfo):
    return [str(problem) for problem in excinfo.value.problems]


GOOD = "age,label,income\n30,fraud,1.5\n41,ok,2\n25,fraud,-3e2\n50,ok,0\n60,ok,7\n"


def test_reads_features_labels_and_row_sources(tmp_path):
    path = _write(tmp_path, GOOD + "\n")  # a trailing blank line is fine
    data = read_labeled_csv(path)
    assert data.modality == "tabular"
    assert data.feature_names == ("age", "income")
    assert data.class_names == ("fraud", "ok")
    assert data.labels.tolist() == [0, 1, 0, 1, 1]
    assert data.samples.dtype == np.float64
    assert data.samples.tolist() == [[30, 1.5], [41, 2], [25, -300], [50, 0], [60, 7]]
    assert data.sources[0] == f"{path}:row 2"


def test_declared_classes_fix_the_order_and_flag_unknown_labels(tmp_path):
    path = _write(tmp_path, GOOD + "33,maybe,1\n")
    with pytest.raises(DataError) as excinfo:
        read_labeled_csv(path, class_names=["ok", "fraud"])
    assert _problems(excinfo) == [f"{path}:row 7: unknown label 'maybe'; declared classes are ['ok', 'fraud']"]
    ok = read_labeled_csv(_write(tmp_path, GOOD, "good.csv"), class_names=["ok", "fraud"])
    assert ok.class_names == ("ok", "fraud") and ok.labels.tolist() == [1, 0, 1, 0, 0]


@pytest.mark.parametrize(
    "cell, expected",
    [("nan", "is NaN"), ("NaN", "is NaN"), ("inf", "is infinite"), ("-Infinity", "is infinite"),
     ("abc", "is not a number: 'abc'"), ("", "is empty (missing value)")],
)  # fmt: skip
def test_bad_cells_name_row_and_column(tmp_path, cell, expected):
    path = _write(tmp_path, GOOD.replace("41,ok,2", f"41,ok,{cell}"))
    with pytest.raises(DataError) as excinfo:
        read_labeled_csv(path)
    (problem,) = excinfo.value.problems
    assert problem.path == f"{path}:row 3"
    assert problem.message.startswith("column 'income' ") and expected in problem.message


def test_every_problem_is_reported(tmp_path):
    text = "a,b,label\n1,2,x\nnan,2,x\n1,inf,y\n1,2\n1,2,y\n1,2,z\n"
    path = _write(tmp_path, text)
    with pytest.raises(DataError) as excinfo:
        read_labeled_csv(path)
    problems = _problems(excinfo)
    assert f"{path}:row 3: column 'a' is NaN ('nan')" in problems
    assert f"{path}:row 4: column 'b' is infinite ('inf')" in problems
    assert f"{path}:row 5: has 2 fields, the header has 3" in problems
    # Bad rows are not counted, so y has one good row (row 6) and z one (row 7).
    assert f"{path}: class 'y' has only 1 row(s) (row 6); at least 2 are needed" in problems
    assert f"{path}: class 'z' has only 1 row(s) (row 7); at least 2 are needed" in problems


def test_header_problems(tmp_path):
    with pytest.raises(DataError, match="no label column 'label'"):
        read_labeled_csv(_write(tmp_path, "a,b\n1,2\n"))
    with pytest.raises(DataError, match="appears more than once"):
        read_labeled_csv(_write(tmp_path, "a,a,label\n1,2,x\n"))
    with pytest.raises(DataError, match="no feature columns"):
        read_labeled_csv(_write(tmp_path, "label\nx\n"))
    with pytest.raises(DataError, match="empty file"):
        read_labeled_csv(_write(tmp_path, ""))
    with pytest.raises(DataError, match="file does not exist"):
        read_labeled_csv(tmp_path / "nope.csv")


@pytest.mark.parametrize("separator, named", [(";", "semicolons"), ("\t", "tabs"), ("|", "vertical bars")])
def test_a_table_separated_by_something_else_than_commas_is_named(tmp_path, separator, named):
    # Spreadsheets in many languages export ';'-separated tables with decimal commas; read as CSV, the whole header
    # is one column, which a table never is.
    text = separator.join(["age", "label", "income"]) + "\n" + separator.join(["30", "fraud", "1,5"]) + "\n"
    with pytest.raises(DataError) as excinfo:
        read_labeled_csv(_write(tmp_path, text))
    (problem,) = _problems(excinfo)
    assert problem.startswith(f"{tmp_path / 'data.csv'}:row 1") and named in problem and "commas" in problem


def test_other_label_column_and_bom(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffclass,x\nA,1\nA,2\nB,3\nB,4\n".encode())
    data = read_labeled_csv(path, label_column="class")
    assert data.feature_names == ("x",) and data.class_counts() == {"A": 2, "B": 2}


@pytest.mark.parametrize("kind", ["table", "texts"])
def test_one_kind_of_problem_takes_at_most_twelve_lines_whatever_the_file_size(tmp_path, kind):
    # A word in a numeric column on every row, a text that is a number on every line: each row's message differs
    # by its value, and the lines are grouped by what is wrong, not by the words.
    import json

    from pcevolve.data.tabular import read_labeled_table
    from pcevolve.data.errors import problem_lines
    from pcevolve.data.table_schema import Column, TableSchema
    from pcevolve.data.text import read_labeled_texts

    rows = 500
    if kind == "table":
        path = _write(tmp_path, "x,y,label\n" + "".join(f"word{i},{i % 7},{'ab'[i % 2]}\n" for i in range(rows))
                      + "".join(f"{i},{i},c\n" for i in range(rows)))
        schema = TableSchema(columns=(Column("x", "numeric", low=0, high=1000), Column("y", "numeric", low=0,
                                                                                         high=10)),
                             label_column="label")
        with pytest.raises(DataError) as excinfo:
            read_labeled_table(path, schema, class_names=("a", "b"))
    else:
        path = tmp_path / "texts.jsonl"
        path.write_text("".join(json.dumps({"text": i, "label": "ab"[i % 2]}) + "\n" for i in range(rows)))
        with pytest.raises(DataError) as excinfo:
            read_labeled_texts(path, text_field="text", label_field="label", class_names=("a", "b"))
    lines = problem_lines(excinfo.value.problems)
    kinds = {problem.group for problem in excinfo.value.problems}
    assert len(excinfo.value.problems) >= rows and len(lines) <= 11 * len(kinds) and len(kinds) <= 4
    assert any(line.startswith(f"… and {rows - 10} more with the same problem") for line in lines)

"""scripts/rust_compile_fail.py: the compile_fail examples it reads.

rustdoc hides a doc line "# code" (or a bare "#") and compiles it; an
attribute such as "#[derive(Debug)]" is a line of code as it is. The
script must give rustc what rustdoc would.
"""

import importlib.util
from pathlib import Path

TOP = Path(__file__).resolve().parents[2]
SCRIPT = TOP / "scripts/rust_compile_fail.py"
spec = importlib.util.spec_from_file_location("rust_compile_fail", SCRIPT)
rcf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rcf)

SOURCE = '''\
/// Text.
///
/// ```compile_fail
/// # use kernel::prelude::*;
/// #
/// #[derive(Debug)]
/// #![allow(unused)]
/// struct S;
/// let s = S; // error[E0382]
/// ```
///
/// ```
/// # not_a_compile_fail();
/// ```
pub fn f() {}
'''


def test_hidden_lines_and_attributes(tmp_path):
    src = tmp_path / "example.rs"
    src.write_text(SOURCE)
    found = list(rcf.examples(src))
    assert len(found) == 1
    line, code, error = found[0]
    assert line == 3  # the fence, counted from 1
    assert code.splitlines() == [
        "use kernel::prelude::*;",
        "",
        "#[derive(Debug)]",
        "#![allow(unused)]",
        "struct S;",
        "let s = S; // error[E0382]",
    ]
    assert error == "E0382"

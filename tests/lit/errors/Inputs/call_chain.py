"""Prints a module of N functions, each calling the one before it (issue 20).

usage: call_chain.py N [bad]

@f0 applies Relu; @f1 .. @f{N-1} each call the previous function; @main calls
@f{N-1} on d0. With `bad`, the functions take tensor<?xf32> and @f0 adds a
2-element constant, which types on its own but not on the 4 elements @main
passes down: the error is N calls deep.
"""
import sys

n = int(sys.argv[1])
bad = len(sys.argv) > 2 and sys.argv[2] == "bad"
param = "tensor<?xf32>" if bad else "tensor<4xf32>"
lines = ["func @f0(%%x: %s) {" % param]
if bad:
    lines.append("  %c = Constant() {value = dense<2xf32>[1.0, 2.0]}")
    lines.append("  %y = Add(%x, %c)")
else:
    lines.append("  %y = Relu(%x)")
lines += ["  return %y", "}"]
for i in range(1, n):
    lines += ["func @f%d(%%x: %s) {" % (i, param), "  %%y = @f%d(%%x)" % (i - 1), "  return %y",
              "}"]
lines += ["func @main(%x: tensor<4xf32, d0>) {", "  %%y = @f%d(%%x)" % (n - 1),
          "  return %y", "}"]
print("\n".join(lines))

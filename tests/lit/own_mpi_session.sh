# Runs "$@" with a session directory of its own for Open MPI (lit.cfg.py):
# a fresh directory under DISTIR_LIT_OMPI_BASE (short, for PMIx's Unix
# sockets), which lit removes when it exits. exec keeps the command's own
# exit status and signals, so `not` and FileCheck see what they would see
# without it.
d=$(mktemp -d "${DISTIR_LIT_OMPI_BASE:-/tmp}/s.XXXXXX") || exit 1
OMPI_MCA_orte_tmpdir_base=$d
export OMPI_MCA_orte_tmpdir_base
exec "$@"

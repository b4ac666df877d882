#!/bin/bash
# The payload of one stand-in package (ci/standins/recipe.yaml), written into $PREFIX.
#   python EXE MAJOR.MINOR VERSION  a venv of the interpreter EXE: pyvenv.cfg, bin/python*
#   dist NAME VIEW MAJOR.MINOR      lib/pythonX.Y/site-packages/_aop_stand_in_NAME.pth -> VIEW
#   tool NAME PATH                  bin/NAME: exec PATH
#   compiler PATH SHORT VAR         bin/<triplet>-SHORT: exec PATH; VAR set on activation
#   note NAME TEXT                  nothing but the note every stand-in has
set -euo pipefail
kind="$1"; shift
notes="$PREFIX/share/aop-stand-ins"
mkdir -p "$notes" "$PREFIX/bin"
case "$kind" in
  python)
    mkdir -p "$PREFIX/lib/python$2/site-packages"
    printf 'home = %s\ninclude-system-site-packages = false\nversion = %s\n' \
      "$(dirname "$1")" "$3" > "$PREFIX/pyvenv.cfg"
    ln -s "$1" "$PREFIX/bin/python$2"
    ln -s "python$2" "$PREFIX/bin/python3"
    ln -s "python$2" "$PREFIX/bin/python"
    echo "stand-in for python: a venv of $1" > "$notes/$PKG_NAME" ;;
  dist)
    mkdir -p "$PREFIX/lib/python$3/site-packages"
    echo "$2" > "$PREFIX/lib/python$3/site-packages/_aop_stand_in_$1.pth"
    echo "stand-in for $1: the Python distribution and its requirements under $2" > "$notes/$PKG_NAME" ;;
  tool)
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$2" > "$PREFIX/bin/$1"
    chmod +x "$PREFIX/bin/$1"
    echo "stand-in for $1: $2" > "$notes/$PKG_NAME" ;;
  compiler)
    triplet="$(uname -m)-conda-linux-gnu"
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$1" > "$PREFIX/bin/$triplet-$2"
    chmod +x "$PREFIX/bin/$triplet-$2"
    mkdir -p "$PREFIX/etc/conda/activate.d"
    printf 'export %s="$CONDA_PREFIX/bin/%s"\n' "$3" "$triplet-$2" \
      > "$PREFIX/etc/conda/activate.d/aop-stand-in-$PKG_NAME.sh"
    echo "stand-in for $PKG_NAME: the system compiler $1" > "$notes/$PKG_NAME" ;;
  note)
    echo "stand-in for $1: $2" > "$notes/$PKG_NAME" ;;
  *) echo "stand-in.sh: unknown kind $kind" >&2; exit 2 ;;
esac

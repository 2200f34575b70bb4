# Sourced by run_app.sh and test.sh: choose the Python to run ctxlab with and install ctxlab there.
#
# An active virtual environment ($VIRTUAL_ENV) is used as it is. Otherwise the project venv
# `.venv` is used, created on first run with `python3 -m venv` from the first Python >= 3.11 on
# the PATH (python3, python3.13, python3.12, python3.11). When that Python has no venv/ensurepip
# (Debian and Ubuntu ship them in python3-venv), the package is installed with apt-get as root or
# through sudo, the way install_system_deps.sh installs chromium; without either, the exact
# command to run is printed. Needs nothing but python3 on the PATH.
#
# After `ctxlab_venv`, $PY is the interpreter; `ctxlab_install EXTRAS` runs `pip install -e
# .[EXTRAS]` once per pyproject.toml content (a stamp file in the venv remembers it). The core
# install is the engine and the CLI only: run_app.sh asks for `app` (the playground), test.sh
# for `test` (which installs every extra: app, fleet, ray, and the test tools).

ctxlab_python_ok() {
    "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}

ctxlab_base_python() {
    local candidate
    for candidate in "${CTXLAB_PYTHON:-}" python3 python3.13 python3.12 python3.11; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 && ctxlab_python_ok "$candidate"; then
            command -v "$candidate"
            return 0
        fi
    done
    echo "ctxlab: no Python 3.11 or later on the PATH (found: $(command -v python3 || echo none));" >&2
    echo "install one, e.g.: sudo apt-get install python3 python3-venv" >&2
    return 1
}

ctxlab_ensure_venv_module() {
    local base="$1" package
    if "$base" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        return 0
    fi
    package="python3-venv"
    if [ "$(id -u)" -eq 0 ]; then
        SUDO=()
    elif command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    else
        echo "ctxlab: $base has no venv module; install it with: sudo apt-get install $package" >&2
        return 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "ctxlab: $base has no venv module and apt-get is missing; install Python's venv module" >&2
        return 1
    fi
    echo "ctxlab: installing $package (the venv module of $base)"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "$package" >/dev/null
    "$base" -c 'import venv, ensurepip' >/dev/null 2>&1 || {
        echo "ctxlab: $package installed but $base still has no venv; run: sudo apt-get install python3.$("$base" -c 'import sys; print(sys.version_info[1])')-venv" >&2
        return 1
    }
}

ctxlab_venv() {
    if [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
        PY="$VIRTUAL_ENV/bin/python"
        if ! ctxlab_python_ok "$PY"; then
            echo "ctxlab: the active venv $VIRTUAL_ENV has Python < 3.11; deactivate it or use another" >&2
            return 1
        fi
        echo "ctxlab: using the active virtual environment $VIRTUAL_ENV"
        return 0
    fi
    local venv="$PWD/.venv" base
    if [ -x "$venv/bin/python" ] && ctxlab_python_ok "$venv/bin/python"; then
        PY="$venv/bin/python"
        return 0
    fi
    base="$(ctxlab_base_python)" || return 1
    ctxlab_ensure_venv_module "$base" || return 1
    echo "ctxlab: creating the project venv .venv with $base ($("$base" --version 2>&1))"
    rm -rf "$venv"
    "$base" -m venv "$venv"
    PY="$venv/bin/python"
}

ctxlab_install() {
    local extras="${1:-}" target="." stamp want
    [ -n "$extras" ] && target=".[$extras]"
    stamp="$("$PY" -c 'import sys; print(sys.prefix)')/.ctxlab-install-${extras:-base}"
    want="$PWD $(cksum < pyproject.toml)"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$PY" -c 'import ctxlab' >/dev/null 2>&1; then
        return 0
    fi
    echo "ctxlab: pip install -e '$target' into $("$PY" -c 'import sys; print(sys.prefix)')"
    "$PY" -m pip install --quiet --disable-pip-version-check -e "$target"
    printf '%s\n' "$want" > "$stamp"
}

// Internal header of the emu runtime (not for programs): what a check found, as one value from
// which both the record (records.h, kind "diagnostic") and the English a student reads are made
// (errors.cpp).
#pragma once

#include <string>

#include "cudalab/emu/types.h"
#include "cudalab/records.h"

namespace cudalab::emu {

struct Diagnostic {
  std::string check;    // the check that found it ("shared_race" ...: docs/diagnostics.md); "" else
  std::string problem;  // what went wrong and what to do, in words
  // Where a check inside a kernel found it (kernel "": a host call, or no thread to name).
  std::string kernel;
  records::SourceLine launch;  // the launch's line
  uint3 block{}, thread{};
  // The access's or call's line (not known: empty, or a hint); a host call's words name it
  // themselves.
  records::SourceLine at;

  Diagnostic() = default;
  // Words only: a refused call, or a finding that names its own places.
  Diagnostic(std::string words) : problem(std::move(words)) {}  // NOLINT: implicit on purpose
  Diagnostic(const char* words) : problem(words) {}             // NOLINT
  // A finding of `check` that names its own places in `words`.
  Diagnostic(std::string check_name, std::string words)
      : check(std::move(check_name)), problem(std::move(words)) {}

  bool empty() const { return problem.empty(); }
  void clear() { *this = {}; }
  // "kernel 'K' (launched at f.cu:9), block (0,0,0), thread (3,0,0), at f.cu:14: <problem>".
  std::string english() const;
  // The record of it; `error`: the error it gives the program (cudaSuccess: none, a warning).
  records::Record record(cudaError_t error) const;
};

}  // namespace cudalab::emu

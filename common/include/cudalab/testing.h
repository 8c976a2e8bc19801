// GoogleTest glue for the lab harnesses.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/compare.h"
#include "cudalab/data.h"
#include "cudalab/source_map.h"

namespace cudalab::testing {

// The seed of the running test's inputs; prints it once so that a failure can be replayed.
uint64_t test_seed();

// Empty if the device computed output `name` (`bytes` bytes at `got`); otherwise why it earns
// nothing: it was computed on the host. The emu backend knows which bytes a kernel wrote (its
// runtime follows each byte from its writer to the host); on a GPU, the harness counts the kernel
// launches of the test (src/launch_count.cpp) and asks for at least one.
std::string computed_on_device(const std::string& name, const void* got, size_t bytes);

// A matrix operand as the device holds it (row-major, `rows` x `cols` elements).
struct MatrixOperand {
  std::string name;
  const void* device;
  size_t rows, cols, element_bytes;
};
using Operands = std::pair<MatrixOperand, MatrixOperand>;
// For a product c = a * b whose element (row, col) is wrong (`bytes` bytes at `c_element`, in the
// host's copy of c): what the thread that stored it read of a and b, said against what the element
// needs (row `row` of a, column `col` of b). On emu the thread is watched while `again` runs the
// same product once more and returns where its operands lay (src/element_reads.cpp). A line of the
// failure's message (ending in a newline), or "" where that is not known (on a GPU, or where no
// thread stored the element).
std::string matmul_reads(const std::string& c_name, const void* c_element, size_t bytes, size_t row,
                         size_t col, const std::function<Operands()>& again);

// An input as the device holds it (`count` elements), and the elements of it that the output
// element being explained needs (ascending).
struct VectorOperand {
  std::string name;
  const void* device;
  size_t count, element_bytes;
  std::vector<size_t> needed;
};
// The same for any output element (`element` names it: "P[5]"): which elements of each input the
// thread that stored it read, said against what it needs. `again` runs the same launch once more
// and returns where the inputs lay, with what the element needs of each.
std::string element_reads(const std::string& element, const void* got_element, size_t bytes,
                          const std::function<std::vector<VectorOperand>()>& again);

#ifdef CUDALAB_LAB_DIR
// The path of the lab's data file `relative` (to the lab's folder) where this process can read it:
// the grader runs the checker outside the sandbox the checker was compiled in.
inline std::string lab_file(const std::string& relative) {
  return where_to_read(std::string(CUDALAB_LAB_DIR) + "/" + relative);
}
#endif

}  // namespace cudalab::testing

namespace cudalab::testing {
// A failure's message: the comparison's report, then the test's hint unless the report says why
// the elements are wrong (a hint for any failure would then only repeat or contradict it).
class Report {
 public:
  Report(std::string report, bool explained) : explained_(explained) { message_ << report; }
  template <class T>
  Report& operator<<(const T& hint) {
    if (!explained_) message_ << hint;
    return *this;
  }
  operator ::testing::Message() const { return message_; }

 private:
  bool explained_;
  ::testing::Message message_;
};
}  // namespace cudalab::testing

// compare() as a non-fatal GoogleTest check that takes a hint for the student (left out where the
// report explains the data itself):
//   EXPECT_MATCHES("C", got, expected, n, tolerance) << "Each thread ...";
#define EXPECT_MATCHES(...)                                                                     \
  if (std::string cudalab_report_ = ::cudalab::compare(__VA_ARGS__); cudalab_report_.empty()) { \
  } else                                                                                        \
    ::testing::internal::AssertHelper(::testing::TestPartResult::kNonFatalFailure, __FILE__,    \
                                      __LINE__, "Failed") =                                     \
        ::cudalab::testing::Report(cudalab_report_, ::cudalab::last_report_explained())

// computed_on_device() as a non-fatal check, for an output the device must have computed:
//   EXPECT_COMPUTED_ON_DEVICE("C", got, n);
#define EXPECT_COMPUTED_ON_DEVICE(name, got, n)                                    \
  if (std::string cudalab_report_ =                                                \
          ::cudalab::testing::computed_on_device(name, got, (n) * sizeof(*(got))); \
      cudalab_report_.empty()) {                                                   \
  } else                                                                           \
    ADD_FAILURE() << cudalab_report_

// The analyzed assignment that every lowering pass reads: kernel arguments, the
// accesses with the index variable of each storage level, and the loop order.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessel/notation.h"

namespace tessel::lower {

/// One kernel argument (`tensors[i]` in generated code).
struct TensorArg {
  TensorVar tensor;
  std::string cname;  ///< C identifier prefix
  Format format;      ///< format the kernel reads (may differ from the tensor's: transposed)
  bool isOutput = false;
  bool snapshotOfOutput = false;  ///< `+=`: the output's values before the kernel runs
};

/// One access B(i,j) of an argument, with the variable of each level (storage order).
struct AccessInfo {
  const ExprNode* node = nullptr;
  int arg = 0;
  std::vector<IndexVar> levelVars;
};

struct Problem {
  Assignment stated;      ///< as given to analyze()
  /// Without the sums around its right-hand side (every variable not on the lhs is
  /// summed around the whole rhs); `+=` rewritten to `A = A_old + rhs`.
  Assignment assignment;
  std::vector<TensorArg> args;  ///< args[0] is the output
  AccessInfo output;
  std::vector<AccessInfo> inputs;  ///< rhs accesses, left to right
  std::vector<IndexVar> order;     ///< loop order, outermost first
  std::vector<std::string> notes;  ///< decisions worth telling the user (auto-transpose)
  /// A masked assignment with a reduction: Pull puts the output's variables before the
  /// reductions, Push the reductions before the output's last level (Gustavson); Auto
  /// (unresolved, as without data) lets the formats decide. See OutputMask::form.
  MaskForm maskForm = MaskForm::Auto;

  const AccessInfo& accessOf(const ExprNode* n) const;
  int accessIndex(const ExprNode* n) const;
  /// Position of v in the loop order.
  int depthOf(const IndexVar& v) const;
  bool isOutputVar(const IndexVar& v) const;
  /// Input access a is a mask read through a dense row of flags (MaskRows): a
  /// complemented mask, or a mask of the push form, stored with dense upper levels over
  /// a compressed last one (CSR, a sparse vector). It is never iterated: the row of the
  /// mask under the bound upper coordinates is scattered once, then tested per entry.
  bool maskByRow(int a) const;
  /// Input access a is a mask's factor whose presence is tested at run time (valued,
  /// complemented or read by row): its cases may be skipped, as those of a Bitmap operand.
  bool maskTested(int a) const;
  /// Some input access is maskTested.
  bool anyMaskTested() const;
  Datatype outputType() const { return args[0].tensor.datatype(); }
};

/// Build the problem: check the assignment, make argument slots, choose the loop
/// order (iteration graph) — transposing an input when formats conflict. An output
/// mask becomes a factor of the right-hand side (maskFactor): M * e for `=`,
/// A_old + M * e for `+=`, M * (A_old + e) for `+=` with replace.
Problem analyze(const Assignment& a);

/// Loop order respecting every access's mode order (hard: levels without random
/// access; soft: dense levels). When the formats conflict it transposes inputs (one,
/// else all that conflict): each gets a new argument slot with a permuted mode order,
/// converted at run time, and a note. Throws FormatError naming the conflicting
/// tensors when `allowTranspose` is false or nothing helps. `outputVarsFirst` makes
/// "sparse output variables before reductions" a hard constraint.
std::vector<IndexVar> chooseLoopOrder(Problem& p, bool allowTranspose = true,
                                      bool outputVarsFirst = false);

}  // namespace tessel::lower

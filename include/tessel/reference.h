// The reference evaluator: an obviously-correct interpreter of index notation over
// coordinate maps. It is the oracle every compiled kernel is tested against.
//
// Semantics (the same ones the compiler implements): a missing entry is zero;
//   support(B(..)) = stored entries, support(a*b) = support(a) ∩ support(b),
//   support(a+b) = support(a-b) = union, support(a/b) = support(a), support(-a) = support(a),
//   a literal is dense. Values follow ordinary arithmetic with missing operands as 0
//   (so x/0 gives ±inf or nan where x is stored). Integer division by zero gives 0.
// Reductions (einsum convention): the rhs splits at its top-level `+`, `-` and negated
// sums into terms, and each term is summed over its own variables that are not on the
// lhs; `sum(v, e)` sums e over every value of v where it is written. So
// a(i) = B(i,j)*c(j) + d(i) is sum_j B(i,j)c(j) + d(i). lhs variables absent from a term
// broadcast. `+=` adds to the output's current values.
// An output mask (Assignment::mask, OutputMask) is applied to the unmasked result: entries
// where the mask is false are dropped; `+=` keeps the old ones there unless it replaces.
// Semirings (Assignment::semiring, tessel/operators.h): `*` is the semiring's mul, and
// `+`, `+=` and every sum its add, with the same supports. An absent entry is the
// semiring's zero (add's identity): min_plus's y(i) = A(i,j) * x(j) is the min over
// stored j of A(i,j) + x(j), and a row with no stored entry is absent (+inf; a dense
// output holds inf there). max_times likewise with max and *, absent = -inf. Every
// stored entry counts, explicit zeros included. `-` and `/` exist only in plus_times.
#pragma once

#include <string>

#include "tessel/coo.h"
#include "tessel/notation.h"

namespace tessel {

/// Result of `a` as entries (mode order), sorted, one per coordinate.
CooData referenceEvaluate(const Assignment& a);

/// Compares two tensors as dense functions (missing = the semiring's zero: 0, +inf for
/// min_plus): |x-y| <= atol + rtol*|y|, nan equals nan, inf equals same-signed inf. On
/// mismatch fills `why` with the first differing coordinate and both values.
bool tensorsClose(const CooData& expected, const CooData& actual, double rtol, double atol,
                  std::string* why = nullptr, const Semiring& semiring = Semiring::plusTimes());
/// As tensorsClose, with the tolerance at each coordinate scaled by the magnitude of the
/// summands there: |x-y| <= atol + rtol*max(|y|, |m|), where `magnitude` (may be null:
/// then as tensorsClose) holds m, e.g. the result of the expression over the inputs'
/// absolute values (a sum that cancels to near 0 is then not held to |y|).
bool tensorsCloseScaled(const CooData& expected, const CooData& actual, const CooData* magnitude, double rtol,
                        double atol, std::string* why = nullptr, const Semiring& semiring = Semiring::plusTimes());

}  // namespace tessel

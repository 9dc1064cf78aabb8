// The form of a masked reduction (OutputMask::form): dot products over the mask's
// entries (pull) or Gustavson's row-wise form intersected with the mask (push), chosen
// from the bound tensors' stored entries when the user leaves it to tessel.
#include "driver/mask_form.h"

#include <algorithm>

#include "format/level_format.h"
#include "runtime/tensor_stats.h"

namespace tessel::driver {

namespace {

/// Product of the extents of n's variables that are in `vars` (1 if none).
double extentOver(const ExprNode& n, const std::vector<IndexVar>& vars) {
  double e = 1;
  for (size_t m = 0; m < n.vars.size(); m++)
    for (const IndexVar& v : vars)
      if (n.vars[m] == v) e *= static_cast<double>(n.tensor.dim(static_cast<int>(m)));
  return e;
}

/// Dense upper levels over a compressed last one (what Problem::maskByRow reads by row).
bool scatteredByRow(const Format& f) {
  int last = f.order() - 1;
  if (last < 0) return false;
  for (int k = 0; k < last; k++)
    if (!levelFormat(f, k).locatable() || levelFormat(f, k).hasFlagArray()) return false;
  const tessel::LevelFormat& lf = levelFormat(f, last);
  return !lf.locatable() && lf.hasPosArray() && lf.unique();
}

}  // namespace

MaskForm chooseMaskForm(const Assignment& a) {
  const OutputMask& k = a.mask;
  if (!k.defined() || k.form != MaskForm::Auto) return k.form;
  if (k.complement || reductionVars(a).empty()) return MaskForm::Auto;  // nothing to choose
  std::vector<IndexVar> out = freeVars(a);
  std::vector<IndexVar> all = out;
  for (const IndexVar& v : reductionVars(a)) all.push_back(v);
  const IndexVar& last = out.back();
  std::vector<IndexVar> upper(out.begin(), out.end() - 1);
  double m = static_cast<double>(boundStoredCount(k.access.node()));
  if (m < 0) return MaskForm::Auto;  // no data: the formats decide
  // pull: per mask entry, a merge of each sparse operand's fiber over the reductions.
  // push: the products (flops), each row of the last operand merged with the mask's row.
  double pull = m, flops = 1, fiberB = 0;
  for (const ExprNode* f : rhsAccesses(a)) {
    double stored = static_cast<double>(boundStoredCount(*f));
    if (stored < 0) return MaskForm::Auto;
    double size = extentOver(*f, f->vars);
    flops *= size > 0 ? stored / size : 0;
    if (!f->tensor.format().isAllDense()) pull += m * stored / extentOver(*f, out);
    std::vector<IndexVar> others;  // f's fibers along the output's last variable
    bool hasLast = false;
    for (const IndexVar& v : f->vars) {
      if (v == last) hasLast = true;
      else others.push_back(v);
    }
    if (hasLast) fiberB = std::max(fiberB, stored / extentOver(*f, others));
  }
  for (const IndexVar& v : all) flops *= static_cast<double>(extentOf(a, v));
  double upperExtent = 1;
  for (const IndexVar& v : upper) upperExtent *= static_cast<double>(extentOf(a, v));
  double fiberM = m / upperExtent;
  // A CSR-like mask is scattered into a row of flags (set and cleared: 2 nnz(M)), any
  // other is merged with each row of the last operand.
  double push = flops + (scatteredByRow(k.access.node().tensor.format()) ? 2 * m
                         : fiberB > 0                                     ? flops / fiberB * fiberM
                                                                          : 0);
  return pull < push ? MaskForm::Pull : MaskForm::Push;
}

Assignment withMaskForm(const Assignment& a) {
  Assignment r = a;
  if (r.mask.defined()) r.mask.form = chooseMaskForm(a);
  return r;
}

}  // namespace tessel::driver

// Choosing the form of a masked reduction (OutputMask::form) from the data.
#pragma once

#include "tessel/notation.h"

namespace tessel::driver {

/// The form a masked assignment runs in: the user's, if not Auto; for Auto with a
/// reduction, a non-complemented mask and every access bound to storage, Pull when
/// nnz(M) * (1 + sum over sparse operands f of nnz(f) / (f's extent over the output's
/// variables)) is below the push cost; else Push. The push cost is flops (the product
/// of the operands' densities and every variable's extent) plus 2 nnz(M) for a mask
/// scattered into rows of flags (dense levels over a compressed one, Problem::maskByRow),
/// else plus (flops / fiber) * (nnz(M) / rows) for merging the mask's rows, fiber the
/// average length of the last operand's fibers along the output's last variable and
/// rows the extent of the output's other variables. For C<M> = A*B with a CSR mask:
/// nnz(M) * (nnz(A)/m + nnz(B)/n) against nnz(A) nnz(B)/k + 2 nnz(M). Auto otherwise.
MaskForm chooseMaskForm(const Assignment& a);

/// a with its mask's form chosen (unchanged without a mask).
Assignment withMaskForm(const Assignment& a);

}  // namespace tessel::driver

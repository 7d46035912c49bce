// Enumerations shared by the BLAS/LAPACK dispatch layers.
#pragma once

namespace keig::backends {

enum class Op { NoTrans, Trans, ConjTrans };  // for real scalars Trans == ConjTrans
enum class Side { Left, Right };
enum class Diag { NonUnit, Unit };
enum class Job { ValuesOnly, Vectors };

}  // namespace keig::backends

--------------------------------- MODULE bad ---------------------------------
(* Self-test input for tools/tlaparse: MUST be rejected.                   *)
(* The definition of Init below is missing its '==' on purpose.           *)
EXTENDS Naturals

VARIABLE x

Init x = 0

Next == x' = x + 1
=============================================================================

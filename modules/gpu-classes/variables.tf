# This module has no input variables: the class table is fixed (DESIGN.md section 4).

// The seating sheet: its button prints the page (the print style keeps only the tables).
"use strict";
document.getElementById("print-seating").addEventListener("click", () => window.print());

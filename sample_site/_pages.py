"""The sample site's pages: path, title, description, body and per-page traps.

See README.md in this folder for the list of traps and what a crawl must do with each.
Keys: path, title, h1, description, body (HTML of the article), lang ("en" default,
None = no lang attribute), canonical (default: the page's own path; None = no tag),
head (extra <head> lines), breadcrumb, tail (HTML after the footer), lastmod.
"""

from __future__ import annotations

GUIDES_CRUMB = (
    '<nav class="breadcrumb" aria-label="Breadcrumb"><a href="/">Home</a> &rsaquo; '
    '<a href="/guides/index.html">Guides</a></nav>\n'
)
ORIGINS_CRUMB = (
    '<nav class="breadcrumb" aria-label="Breadcrumb"><a href="/">Home</a> &rsaquo; '
    '<a href="/guides/">Guides</a> &rsaquo; <a href="/guides/origins/">Origins</a></nav>\n'
)
BLOG_CRUMB = (
    '<nav class="breadcrumb" aria-label="Breadcrumb"><a href="/">Home</a> &rsaquo; '
    '<a href="/blog/">Blog</a></nav>\n'
)

#: The sidebar's "Popular posts" links (on every page).
POPULAR = [
    ("/guides/espresso/", "How to pull a great espresso shot"),
    ("/blog/2026/08/why-my-pour-over-tasted-sour/", "Why my pour-over tasted sour"),
    ("/guides/cold-brew/", "Cold brew, the easy way"),
    ("/guides/grinders/", "Choosing a coffee grinder"),
]

#: Pages left out of sitemap.xml / sitemap-pages.xml.
SITEMAP_EXCLUDE = {
    "/guides/espresso-print/",  # canonicalised duplicate
    "/blog/page/2/",  # pagination
    "/blog/tag/espresso/",  # noindex
    "/js-only-target/",  # must be reachable only through JavaScript
    "/private/secret/",  # disallowed by robots.txt
    "/search/",  # search results
}

PAGES: list[dict] = []


def page(path: str, title: str, description: str, body: str, h1: str | None = None, **extra: object) -> None:
    """Add one page to the site."""
    PAGES.append({"path": path, "title": title, "h1": h1 or title, "description": description, "body": body, **extra})


# --------------------------------------------------------------------------- home
page(
    "/",
    "Brew Guide: better coffee at home",
    "Practical, tested guides to brewing coffee at home: grinders, espresso, pour-over, "
    "French press, cold brew, water and beans.",
    h1="Better coffee at home",
    body="""
<p>Brew Guide is a small site about making coffee at home that tastes as good as the
coffee you queue for. We test equipment in our own kitchens, write down what works, and
keep the recipes short enough to follow before the first cup of the day.</p>
<p><a href="/guides/espresso/"><img src="/img/espresso.svg" alt="Espresso guide" width="120"
height="80"></a></p>
<h2>Start here</h2>
<p>If you are new to brewing, start with the grinder. Freshly ground coffee makes a bigger
difference than any machine, and our <a href="/guides/grinders/">guide to choosing a coffee
grinder</a> explains what to spend and what to skip. Want to compare prices first? See the
<a href="/guides/grinders/?sort=price">grinders sorted by price</a>.</p>
<p>Then pick a brewing method. A <a href="guides/pour-over/">pour-over</a> rewards care and
gives a clean, bright cup; a French press is forgiving and rich; espresso is the most
demanding and the most rewarding. Every method is covered in <a href="/guides/">our brewing
guides</a>, and the printable <a href="/downloads/brew-ratios.pdf">brew ratio chart (PDF)</a>
sits happily on the fridge door.</p>
<h2>From the newsletter</h2>
<p>This month's newsletter was all about iced coffee. If you missed it, our
<a href="/guides/cold-brew/?utm_source=newsletter&amp;utm_medium=email">cold brew recipe</a>
takes ten minutes of work and a night in the fridge. Readers also liked the story of
<a href="/blog/2026/08/why-my-pour-over-tasted-sour/">why my pour-over tasted sour</a>
and how a single click on the grinder fixed it.</p>
<h2>Try something new</h2>
<p>Our <a href="/js/">interactive brew timer</a> counts the bloom and the pours for you.
Readers in France and Belgium can read the espresso guide
<a href="/fr/guide-espresso/" hreflang="fr">en français</a>. Looking for beans and gear?
Visit <a href="/shop/">our shop</a>, run by a partner roaster. Everything we have written
about espresso is collected under the <a href="/blog/tag/espresso/">espresso tag</a>.</p>
<p>Brew Guide is independent and reader supported. We never accept free equipment in
exchange for a review, and when a product disappoints us we say so plainly.</p>
""",
)

# --------------------------------------------------------------------------- guides index
page(
    "/guides/",
    "Coffee brewing guides",
    "Every Brew Guide tutorial in one place: equipment, brewing methods, water, roasting and origins.",
    breadcrumb='<nav class="breadcrumb" aria-label="Breadcrumb"><a href="/">Home</a></nav>\n',
    body="""
<p>These guides are written for people brewing at home with ordinary kitchens and sensible
budgets. Each one explains the reasoning behind the recipe, so you can adapt it to your
own beans, water and taste instead of following numbers blindly.</p>
<h2>Equipment</h2>
<ul>
<li><a href="grinders/">Choosing a coffee grinder</a>: what to buy at every budget.
<a href="grinders/?sort=price">Sort grinders by price</a>.</li>
<li><a href="burr-vs-blade/">Burr vs blade grinders</a>: why the cheap option costs flavour.</li>
<li><a href="grind-size/">Grind size explained</a>: from powder-fine to coarse sea salt.</li>
<li><a href="descaling/">Descaling your machine</a>: keep kettles and espresso machines healthy.</li>
</ul>
<h2>Brewing methods</h2>
<ul>
<li><a href="espresso/">Espresso</a>: dialling in a shot, step by step.</li>
<li><a href="pour-over/">Pour-over</a>: the V60, Kalita and friends.</li>
<li><a href="french-press/">French press</a>: full body with almost no technique.</li>
<li><a href="aeropress/">AeroPress</a>: the travel favourite.</li>
<li><a href="cold-brew/">Cold brew</a>: smooth iced coffee for summer.</li>
<li><a href="milk-steaming/">Milk steaming</a>: microfoam for flat whites and cappuccinos.</li>
</ul>
<h2>Beans and water</h2>
<ul>
<li><a href="water/">Water chemistry</a>: the ingredient everyone forgets.</li>
<li><a href="roast-levels/">Roast levels</a>: light, medium and dark, and what they change.</li>
<li><a href="origins/">Bean origins</a>: Ethiopia, Colombia, Brazil and more.</li>
<li><a href="storage/">Storing coffee beans</a>: keeping beans fresh for longer.</li>
</ul>
<h2>How to use these guides</h2>
<p>Start with the method you already own. Brew the recipe exactly as written three or four
times, taste carefully, and only then begin to change things, one variable at a time: grind
first, then ratio, then water temperature. Keep a short notebook of what you changed and how
it tasted; after a few weeks you will know your equipment better than any guide can.</p>
<p>Unsure about a word? The <a href="/glossary/">coffee glossary</a> explains terms like
bloom, crema, channeling and extraction in plain language.</p>
""",
)

# --------------------------------------------------------------------------- grinders
page(
    "/guides/grinders/",
    "Choosing a coffee grinder",
    "How to choose a home coffee grinder: burr types, hand versus electric, budgets, and which "
    "grinder suits which brewing method.",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>If you only upgrade one thing in your coffee setup, make it the grinder. Coffee starts
losing its aroma within minutes of grinding, and an even grind is what lets water extract
sugars and acids at the same rate from every particle. A good grinder paired with a cheap
brewer will beat an expensive brewer fed with stale, uneven grounds every time.</p>
<h2>Burr or blade?</h2>
<p>Blade grinders chop beans with a spinning propeller, producing a mix of dust and
boulders. Burr grinders crush beans between two rough surfaces set a fixed distance apart,
which gives far more consistent particles. We explain the difference in detail in
<a href="../burr-vs-blade/">burr vs blade grinders</a>, but the short version is simple:
buy a burr grinder if you possibly can.</p>
<h2>Conical or flat burrs</h2>
<p>Conical burrs are common in hand grinders and affordable electric models. They run
slower, stay cooler and are easy to clean. Flat burrs are found in many commercial and
high-end home grinders; they tend to produce a narrower spread of particle sizes, which
some people prefer for a very clear cup. At home, the quality of the alignment matters
more than the shape.</p>
<h2>Hand or electric</h2>
<p>A good hand grinder costs less than an electric grinder of the same quality, because
you supply the motor. Grinding twenty grams for a morning pour-over takes under a minute.
Grinding eighteen grams finely for espresso takes noticeably longer, and grinding a litre's
worth of coarse coffee for a French press gets tiring. If you brew for a household, or you
make several espresso drinks a day, an electric grinder earns its price.</p>
<h2>Matching the grinder to the method</h2>
<p>Espresso needs a grinder with very fine, stepless or small-step adjustment, because a
tiny change in grind size changes the shot time by several seconds. Filter methods such as
the AeroPress, the Chemex and cold brew are much less fussy: a grinder with twenty or
thirty clear steps is enough. Check that the grinder you choose can go coarse enough for
immersion brewing and fine enough for your finest method.</p>
<h2>What to spend</h2>
<p>Set aside about a third of your coffee budget for the grinder. Read independent reviews,
look for replaceable burrs, and prefer models with a simple path from hopper to cup, since
grounds that stay behind in the chute go stale and end up in tomorrow's brew. For current
prices, see <a href="https://www.example-shop.com/grinders?tag=brewguide-21"
rel="nofollow sponsored">our affiliate partner's grinder list</a>.</p>
<p>Once your grinder arrives, spend ten minutes learning its settings and keep notes: the
setting that works for your favourite beans today is the best starting point for the next
bag.</p>
""",
)

# --------------------------------------------------------------------------- burr vs blade
page(
    "/guides/burr-vs-blade/",
    "Burr vs blade grinders",
    "Why burr grinders give better coffee than blade grinders, with tips for getting the most "
    "out of a blade grinder if that is what you have.",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>Almost every coffee professional will tell you to replace a blade grinder with a burr
grinder. That advice is right, but it is worth understanding why, because the reason also
explains most of the strange flavours people meet when they start brewing at home.</p>
<h2>How a blade grinder works</h2>
<p>A blade grinder is a small motor with a propeller at the bottom of a cup. The blade
smashes whatever it hits, and the beans bounce around until you stop pressing the button.
The result is a mixture of fine dust and large chunks. There is no setting: the only
control is how long you grind, and a few seconds too long heats the coffee.</p>
<h2>How a burr grinder works</h2>
<p>A burr grinder pulls beans between two hardened rings or cones. A particle can only
leave once it is small enough to pass through the gap, so most of the coffee comes out at
about the same size. You choose that size by moving the burrs closer together or further
apart, and you get the same result every morning.</p>
<h2>Why consistency matters in the cup</h2>
<p>Water extracts flavour from the outside of each particle inwards. Fine dust extracts
completely in seconds and turns bitter and harsh; big chunks barely get started and taste
sour and thin. A blade grinder gives you both at once, which is why coffee from a blade
grinder often tastes bitter and sour at the same time. A burr grinder lets you hit the
sweet middle, and lets you correct the taste by changing the grind size by one step.</p>
<p>The difference is most obvious with espresso, which most blade grinders simply cannot
produce, and least obvious with a French press or cold brew, where long immersion hides
some of the unevenness.</p>
<h2>Getting the best from a blade grinder</h2>
<ul>
<li>Grind in short pulses and shake the grinder between pulses to move the chunks back
towards the blade.</li>
<li>Grind a small amount at a time; an overfilled cup grinds less evenly.</li>
<li>Sift out the dust with a fine tea strainer for a cleaner cup.</li>
<li>Use it for immersion methods, where it performs best.</li>
</ul>
<p>When you are ready to upgrade, our guide to <a href="/guides/grinders/">choosing a coffee
grinder</a> walks through hand and electric burr grinders at every budget.</p>
""",
)

# --------------------------------------------------------------------------- grind size
page(
    "/guides/grind-size/",
    "Grind size explained",
    "A grind size chart for every brewing method, from Turkish coffee to cold brew, and how to "
    "adjust grind size by taste.",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>Grind size is the most powerful dial you have. It controls how fast water can extract
flavour from the coffee, and in methods where water flows through a bed of grounds it also
controls how long the brew takes. Changing it is free, instant and reversible, so learn to
reach for it first when a cup tastes wrong.</p>
<h2 id="chart">A grind size chart</h2>
<ul>
<li><strong>Extra fine</strong>, like flour: Turkish coffee.</li>
<li><strong>Fine</strong>, like table salt that clumps when pinched:
<a href="/guides/espresso/">espresso</a>.</li>
<li><strong>Medium fine</strong>, like fine sand: the moka pot and the AeroPress with a short
steep.</li>
<li><strong>Medium</strong>, like beach sand: <a href="/guides/pour-over/">pour-over</a> cones
and flat-bottomed drippers.</li>
<li><strong>Medium coarse</strong>, like kosher salt: the Chemex and batch brewers.</li>
<li><strong>Coarse</strong>, like sea salt: the French press.</li>
<li><strong>Extra coarse</strong>, like cracked peppercorns: cold brew.</li>
</ul>
<p>Treat the chart as a starting point. Two grinders labelled "medium" can differ a lot,
and lighter roasts usually want a finer setting than darker roasts.</p>
<h2>Adjusting by taste</h2>
<p>Sour, sharp, thin or salty coffee is under-extracted: grind finer. Bitter, dry, hollow
or harsh coffee is over-extracted: grind coarser. Change one step at a time and keep the
dose and water the same, otherwise you cannot tell which change helped.</p>
<h2>Why uniformity matters as much as size</h2>
<p>An average setting means little if the grinder produces a wide spread of particles.
Blade grinders make dust and boulders at the same time, which is why a burr grinder is the
first upgrade we recommend. Stale coffee also grinds differently: beans that have lost
their gas and moisture shatter into more fines.</p>
<h2>Grind size and brew time</h2>
<p>In percolation methods like espresso and pour-over, finer grounds slow the flow, so
grind size and brew time move together. In immersion methods like the French press and
cold brew, the brew time is whatever you choose, so you can pair a coarse grind with a
longer steep for a cleaner cup.</p>
""",
)

# --------------------------------------------------------------------------- espresso
ESPRESSO_BODY = """
<p>Espresso is coffee brewed by forcing hot water through a compact puck of finely ground
coffee at around nine bars of pressure. It takes about half a minute, and in that time
small mistakes are magnified: that is what makes espresso frustrating at first and
satisfying once it clicks. <a href="#dialing-in">Skip to dialling in</a>.</p>
<h2>What you need</h2>
<p>A machine that holds a stable temperature, a grinder that can make small adjustments in
the fine range, a scale that reads to a tenth of a gram, and fresh beans roasted within the
last few weeks. Of these, the grinder matters most: a cheap machine with a capable burr
grinder makes better shots than an expensive machine with pre-ground coffee.</p>
<h2>The recipe</h2>
<p>Start with a ratio of one to two: eighteen grams of ground coffee in, about thirty-six
grams of liquid espresso out, in twenty-five to thirty seconds from the moment you start
the pump. Use water that is soft but not empty of minerals; our guide to
<a href="/guides/water/">water chemistry for coffee</a> explains why hard water ruins both
taste and boilers. The printable <a href="/downloads/brew-ratios.pdf">brew ratio chart</a>
lists the ratio for ristretto and lungo too.</p>
<h2>Preparing the puck</h2>
<p>Distribute the grounds evenly in the basket before tamping, breaking up clumps with a
needle tool if your grinder produces them. Tamp level and firmly; the exact pressure matters
far less than consistency. An uneven puck lets water find an easy path, which is called
<a href="/glossary/#channeling">channeling</a>, and it shows up as a fast, sour and bitter
shot at once.</p>
<h2 id="dialing-in">Dialling in</h2>
<p>Pull a shot and taste it. If it ran fast and tastes sour or salty, grind finer. If it ran
slow and tastes bitter or ashy, grind coarser. Adjust the grind size in the smallest steps
your grinder allows and change nothing else until the time is in range, then fine-tune by
taste. Light roast levels usually need a finer grind, a higher temperature and a longer
ratio than the dark, oily beans of a traditional Italian blend.</p>
<h2>Milk drinks</h2>
<p>Cappuccinos, flat whites and lattes start with the same shot. Steaming milk to a silky
microfoam is its own skill: purge the steam wand, keep the tip just below the surface
until the milk has grown by a third, then sink it to spin the milk until the jug is too hot
to hold comfortably.</p>
<h2>Looking after the machine</h2>
<p>Backflush the group head weekly if your machine has a three-way valve, wipe the steam
wand after every use, and follow a descaling schedule that suits your water. Scale is the
most common reason home espresso machines fail. A <a href="/guides/espresso-print/">printable
version of this guide</a> is available for your kitchen wall.</p>
"""

page(
    "/guides/espresso/",
    "How to pull a great espresso shot",
    "A step-by-step espresso guide: equipment, the 1:2 recipe, puck preparation, dialling in by "
    "taste, milk drinks and machine care.",
    h1="How to pull a great espresso shot",
    breadcrumb=GUIDES_CRUMB,
    head=['<link rel="alternate" hreflang="fr" href="{{BASE}}/fr/guide-espresso/">'],
    body=ESPRESSO_BODY,
    lastmod="2026-08-30",
)

page(
    "/guides/espresso-print/",
    "How to pull a great espresso shot (printable)",
    "Printable version of the Brew Guide espresso guide.",
    h1="How to pull a great espresso shot",
    canonical="/guides/espresso/",
    breadcrumb=GUIDES_CRUMB,
    body=ESPRESSO_BODY.replace(
        'A <a href="/guides/espresso-print/">printable\nversion of this guide</a> is available for your '
        "kitchen wall.",
        'Back to the <a href="/guides/espresso/">espresso guide</a>.',
    ),
)

# --------------------------------------------------------------------------- pour-over
page(
    "/guides/pour-over/",
    "Pour-over coffee: a beginner's guide",
    "How to brew pour-over coffee with a V60 or Kalita Wave: ratio, grind, water temperature, "
    "the bloom and the pour.",
    h1="Pour-over coffee, step by step",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>Pour-over brewing means pouring hot water by hand over coffee in a paper filter and
letting it drip into a cup or carafe. It is cheap to start, quick once learned, and gives
the cleanest, most transparent cup of any home method, which is why it is the favourite way
to taste delicate coffees from places like Ethiopia and Kenya.</p>
<h2>Equipment</h2>
<p>You need a dripper such as a Hario V60 or a Kalita Wave, paper filters that fit it, a
kettle with a narrow spout, a scale and a timer. A gooseneck kettle makes it much easier to
pour slowly and in a controlled spiral. We were going to review kettles in
<a href="/guides/missing/">our pour-over kettle guide</a>, but in short: any kettle with a
thin spout will do.</p>
<h2>The recipe</h2>
<ol>
<li>Heat water to 92–96 °C; use the hotter end for light roasts.</li>
<li>Weigh 15 grams of coffee and grind it medium, like beach sand. If you are unsure what
that means, our <a href="/guides/grind-size/#chart">grind size chart</a> has pictures.</li>
<li>Rinse the paper with hot water to remove its taste and warm the dripper, then discard
the rinse water.</li>
<li>Add the coffee, make a small dent in the middle, and pour 30 grams of water to wet all
the grounds. Wait 30–45 seconds while the coffee releases gas: this is the bloom.</li>
<li>Pour the rest slowly in circles, reaching 250 grams of water by about 1:45.</li>
<li>Let it drain. The whole brew should finish between 2:30 and 3:30.</li>
</ol>
<h2>Fixing the taste</h2>
<p>If the brew drained quickly and tastes sour, grind finer; if it choked and tastes bitter,
grind coarser. A burr grinder makes these corrections reliable, since each step on the dial
means the same thing every day. Water matters as much as grind: very hard tap water mutes
acidity and coats the palate, so try bottled water with low mineral content if your coffee
tastes flat.</p>
<h2>Choosing beans</h2>
<p>Pour-over shows off origin character, so it suits light and medium roast levels. Washed
coffees from Ethiopia taste floral and tea-like; Colombian coffees are balanced and sweet.
Dark roasts work too, but use slightly cooler water to keep bitterness down.</p>
""",
)

# --------------------------------------------------------------------------- French press
page(
    "/guides/french-press/",
    "French press coffee",
    "How to make rich, sediment-free French press coffee: ratio, coarse grind, steep time and the "
    "no-plunge trick.",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>The French press, also called a cafetière or press pot, is the most forgiving way to
brew good coffee. The grounds steep in hot water for a few minutes, then a metal mesh
separates them from the brew. Because the mesh lets through oils and very fine particles,
French press coffee has a heavy, rounded body that many people love.</p>
<h2>The recipe</h2>
<p>Use 30 grams of coffee for 500 grams of water, a ratio of about one to sixteen. Grind
coarse, like sea salt. Pour water just off the boil over the grounds, stir gently, put the
lid on without pressing, and wait four minutes.</p>
<h2>The no-plunge trick</h2>
<p>After four minutes, stir the crust on top so that most of the grounds sink. Skim off the
foam and floating bits with two spoons. Then wait another five minutes: the fine particles
settle to the bottom by themselves. Press the plunger only until it touches the surface of
the coffee and pour slowly. You get a much cleaner cup with far less sludge, and the coffee
is still hot.</p>
<h2>Why grind quality matters</h2>
<p>Immersion brewing hides some unevenness in the grind, which is why a French press is the
best use of a blade grinder. Still, a burr grinder set coarse produces fewer fines, and
fines are what make the cup muddy and bitter. Read <a href="/guides/burr-vs-blade/">burr vs
blade grinders</a> for the reasons.</p>
<h2>Beans and roast</h2>
<p>Medium and dark roasts shine in a press, with chocolate and nutty flavours that suit the
heavy body. Brazilian coffees are a classic choice. Light roasts can taste thin in a press
unless you grind a little finer and steep a little longer.</p>
<h2>Cold brew in a French press</h2>
<p>The same jug makes excellent cold brew: fill it with coarse grounds and cold water,
leave it in the fridge overnight, and press in the morning. It is the easiest way to try
cold brew before buying a dedicated brewer.</p>
<h2>Cleaning</h2>
<p>Take the plunger apart every week and wash the mesh, since old oils go rancid and taste
stale. Throw the grounds in the compost, not the sink.</p>
""",
)

# --------------------------------------------------------------------------- AeroPress
page(
    "/guides/aeropress/",
    "AeroPress recipes",
    "Two reliable AeroPress recipes, standard and inverted, plus tips on grind, water and "
    "making a concentrated espresso-style shot.",
    h1="AeroPress recipes that work",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>The AeroPress is a plastic syringe for coffee. Coffee and water steep in the chamber,
and then you press them through a small paper filter with a plunger. It is light, nearly
unbreakable and very easy to clean, which makes it the favourite brewer of travellers and
office coffee drinkers.</p>
<h2>The standard recipe</h2>
<ol>
<li>Put a paper filter in the cap, rinse it, and screw the cap onto the chamber.</li>
<li>Set the chamber on a sturdy mug and add 15 grams of coffee ground medium fine.</li>
<li>Pour 220 grams of water at about 90 °C, stir three times and insert the plunger just
enough to stop dripping.</li>
<li>At two minutes, swirl gently, then press slowly for about thirty seconds.</li>
</ol>
<h2>The inverted method</h2>
<p>Many people brew upside down: the plunger goes in first, the chamber stands on it, and
the coffee steeps without dripping through the filter. When the time is up, screw on the
cap, flip the brewer onto a mug and press. It gives a fuller steep but needs care, since a
wobbly flip spills hot coffee.</p>
<h2>Concentrated "espresso-style" coffee</h2>
<p>An AeroPress cannot make real espresso: hand pressure reaches less than one bar, while an
espresso machine uses about nine. It can, however, make a strong concentrate that works
well with milk. Use 18 grams of finely ground coffee and 90 grams of water, steep for one
minute and press hard. If you want the real thing, read <a href="/old-espresso-guide/">our
espresso guide</a>.</p>
<h2>Adjusting</h2>
<p>The AeroPress is forgiving, but the usual rules apply: grind finer or steep longer if the
cup tastes sour, coarser or shorter if it tastes bitter. Because you control the steep time
exactly, it is a good tool for learning how grind size and time trade against each other,
lessons that carry over directly to pour-over.</p>
<p>On the road, pre-weigh doses into small jars and pack a hand grinder; the whole kit fits
in a shoe. For hot days, an AeroPress concentrate poured over ice is a quick alternative to
overnight cold brew.</p>
""",
)

# --------------------------------------------------------------------------- cold brew
page(
    "/guides/cold-brew/",
    "Cold brew, the easy way",
    "How to make smooth cold brew coffee concentrate at home: ratio, grind, steep time, "
    "filtering and how long it keeps.",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>Cold brew is coffee steeped in cold or room-temperature water for many hours instead of
brewed with hot water for minutes. Cold water extracts fewer of the bitter compounds and
acids, so the result is smooth, sweet and low in acidity. It is the simplest way to make
excellent iced coffee, and a batch lasts all week.</p>
<h2>The recipe</h2>
<p>Mix 100 grams of coarsely ground coffee with one litre of cold, filtered water in a jar
or jug. Stir to wet all the grounds, cover, and leave it for 14 to 18 hours. The fridge
gives a cleaner taste; the kitchen counter extracts a little faster. Then strain it through
a paper filter or a fine cloth. The result is a concentrate: dilute it one to one with
water or milk and pour over ice.</p>
<h2>Grind and beans</h2>
<p>Use a very coarse grind, like cracked peppercorns. Fine grounds make the concentrate
cloudy, slow to filter and bitter. The <a href="/guides/grind-size/">grind size guide</a>
shows how coarse we mean. Medium and dark roasts from Brazil or Colombia give classic
chocolate and caramel flavours; a fruity natural coffee makes a surprisingly juicy cold
brew.</p>
<h2>Equipment</h2>
<p>You do not need special gear. A French press works well: steep in the jug, then press.
Dedicated cold brew makers add a fine filter basket and a tap, which makes serving easier
but adds nothing to the taste.</p>
<h2>Keeping it</h2>
<p>Store the strained concentrate in a sealed bottle in the fridge and drink it within ten
days; it slowly loses aroma and picks up fridge smells. Do not leave the grounds in the
concentrate, since it keeps extracting and turns woody.</p>
<h2>Cold brew versus iced coffee</h2>
<p>Japanese-style iced coffee is brewed hot directly onto ice. It keeps more of the bright
acidity and aroma that cold brew loses, and it is ready in five minutes. Try both: many
people prefer cold brew with milk and flash-brewed iced coffee black.</p>
""",
)

# --------------------------------------------------------------------------- water
page(
    "/guides/water/",
    "Water chemistry for coffee",
    "Why water is the most overlooked coffee ingredient: hardness, alkalinity, the SCA water "
    "standard, and simple recipes for brewing water.",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>A cup of filter coffee is more than 98 percent water, yet water is the ingredient most
home brewers never think about. The minerals dissolved in it change how much flavour is
extracted from the coffee and how that flavour tastes in the cup.</p>
<h2>Hardness and alkalinity</h2>
<p>Two numbers matter. General hardness measures magnesium and calcium, which help pull
flavour out of the coffee; water with almost no hardness makes flat, hollow coffee.
Alkalinity, or buffer, measures bicarbonate, which neutralises acids; too much of it makes
coffee taste dull and chalky, while a little keeps it from tasting sour.</p>
<p>The Specialty Coffee Association publishes a target range, summarised in the
<a href="https://sca.coffee/research/coffee-standards" rel="nofollow">SCA water quality
standard</a>. Roughly: hardness around 50 to 175 ppm as calcium carbonate and alkalinity
around 40 ppm.</p>
<h2>What to do about your tap water</h2>
<p>Find your water report from your supplier and compare. Very hard tap water is common and
causes two problems: it mutes the taste of light roasts, and it leaves limescale in kettles
and machines, which is why <a href="/guides/descaling/">descaling</a> is part of regular
maintenance. A jug filter with an ion-exchange cartridge softens water enough for most
filter brewing.</p>
<h2>Making your own brewing water</h2>
<p>For full control, start with distilled water and add minerals. A popular recipe uses two
concentrates: Epsom salt for magnesium and baking soda for buffer. Small changes have big
effects, so measure carefully and change one thing at a time.</p>
<h2>Water for espresso machines</h2>
<p>Espresso machines are less tolerant than kettles: scale blocks valves and ruins heating
elements, while water with too little mineral content can corrode boilers. Follow the
maker's advice and test your water before buying a machine.</p>
<p>Try a blind tasting: brew the same coffee with tap water and with a low-mineral bottled
water. Most people are astonished by the difference, especially with pour-over.</p>
""",
)

# --------------------------------------------------------------------------- roast levels
page(
    "/guides/roast-levels/",
    "Coffee roast levels explained",
    "Light, medium and dark roasts: how roasting changes flavour, caffeine and brewing, and how "
    "to pick a roast for your method.",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>Green coffee beans are hard, grassy seeds with almost none of the flavour we associate
with coffee. Roasting creates that flavour: sugars caramelise, acids break down, and
hundreds of aromatic compounds form. How far the roaster takes the beans shapes the cup
more than almost any other decision.</p>
<h2>Light roasts</h2>
<p>Light roasts are stopped shortly after the first crack, the popping sound beans make as
moisture escapes. They keep the most origin character: florals, citrus and berry notes,
and a bright acidity. They are dense and harder to extract, so they need finer grinding and
hotter water. Light roasts are the usual choice for pour-over and for coffees from
Ethiopia and Kenya.</p>
<h2>Medium roasts</h2>
<p>Medium roasts balance acidity and sweetness, with caramel, nut and milk chocolate
flavours. They are the most versatile, working well in drip machines, the AeroPress and
the French press, and they make approachable espresso.</p>
<h2>Dark roasts</h2>
<p>Dark roasts go into or past the second crack. Oils reach the surface, acidity almost
disappears and bitter, smoky and roasty flavours dominate. Dark roasts extract easily,
so use cooler water and a coarser grind. They hold up well to milk and are traditional for
Italian-style espresso.</p>
<h2>Myths</h2>
<p>Dark roast does not mean more caffeine; by weight, the difference is tiny. "Strong"
coffee is about the ratio of coffee to water, not the roast. And oily beans are not a sign
of freshness; they are a sign of a dark roast, and those oils go stale faster.</p>
<h2>Freshness and rest</h2>
<p>Freshly roasted coffee releases carbon dioxide for days. Most coffee tastes best between
about one and four weeks after roasting; espresso often benefits from a longer rest than
filter. Buy from roasters who print a roast date, not only a best-before date.</p>
<p>Where a coffee comes from sets its potential and the roast decides how much of it you
taste. To learn what different countries bring to the cup, read our guide to
<a href="/guides/origins/">coffee bean origins</a>.</p>
""",
)

# --------------------------------------------------------------------------- origins
page(
    "/guides/origins/",
    "Coffee bean origins",
    "How a coffee's country, altitude and processing shape its flavour, with guides to "
    "Ethiopian, Colombian and Brazilian coffee.",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>Coffee grows in a band around the equator, in more than fifty countries. Like wine
grapes, coffee picks up character from where it grows: the variety of the plant, the soil,
the altitude, the rainfall and the way the fruit is processed after picking all show up in
the cup.</p>
<h2>Altitude</h2>
<p>Coffee grown high on mountains ripens slowly in cool nights. The beans are denser and
usually more complex and acidic. Lower-grown coffee tends to be softer, rounder and less
acidic, which suits blends and espresso.</p>
<h2>Processing</h2>
<p>Coffee beans are the seeds of a cherry. Washed coffees have the fruit removed before
drying and taste clean and bright. Natural coffees dry inside the whole cherry and taste
fruity, sweet and sometimes winey. Honey processing sits in between, leaving some of the
sticky fruit on the seed while it dries.</p>
<h2>Three origins to start with</h2>
<ul>
<li><a href="ethiopia/">Ethiopia</a>: the birthplace of coffee, with floral, tea-like washed
coffees and blueberry-sweet naturals.</li>
<li><a href="colombia/">Colombia</a>: balanced, sweet and reliable, grown on steep slopes with
two harvests a year.</li>
<li><a href="brazil/">Brazil</a>: the world's largest producer, known for nutty,
chocolatey, low-acid coffee.</li>
</ul>
<h2>Single origin or blend?</h2>
<p>A single origin coffee comes from one country, region or even one farm, and shows its
character clearly. A blend mixes coffees to build a consistent flavour all year round,
which is why most espresso blends combine a sweet, heavy Brazilian base with a brighter
coffee from Central America or East Africa.</p>
<p>The roast decides how much of the origin you taste: light roasts reveal it, dark roasts
cover it. When you try a new country, buy a light or medium roast and brew it as a
pour-over to hear what it has to say.</p>
""",
)

page(
    "/guides/origins/ethiopia/",
    "Ethiopian coffee",
    "Ethiopian coffee guide: Yirgacheffe, Sidamo and Guji, washed and natural processing, and how "
    "to brew these floral, fruity coffees.",
    breadcrumb=ORIGINS_CRUMB,
    body="""
<p>Ethiopia is where coffee began. Wild coffee trees still grow in its forests, and the
country holds more genetic diversity of Arabica than the rest of the world combined. Most
Ethiopian coffee comes from small gardens, where families grow a few hundred trees among
other crops and deliver cherries to local washing stations.</p>
<h2>Regions</h2>
<p>Yirgacheffe is famous for delicate washed coffees that taste of jasmine, lemon and
bergamot. Sidamo, the larger region around it, produces sweet, rounded coffees with stone
fruit notes. Guji, to the south, has become known for intense, fruity naturals. Harrar in
the east grows dry-processed coffee with a wild, winey character.</p>
<h2>Washed and natural</h2>
<p>A washed Ethiopian coffee is clean, light-bodied and floral, often compared to black
tea. A natural from the same area can taste of blueberries and strawberry jam. Both are
worth trying side by side; it is the quickest way to understand how much processing
changes a coffee.</p>
<h2>How to brew it</h2>
<p>Ethiopian coffees are usually roasted light to keep their aromatics. Brew them as a
pour-over or with a flat-bottomed dripper, grind a little finer than you would for a medium
roast, and use water around 94 to 96 °C. Hard water flattens the florals, so use filtered
or low-mineral water. As espresso, they are bright and juicy, best as a long shot or with a
splash of milk.</p>
<h2>Coffee ceremony</h2>
<p>In Ethiopia, coffee is a social ritual. Green beans are roasted in a pan over charcoal,
ground by hand and brewed in a clay pot called a jebena, then served in three rounds to
guests. Taking part in one is the best introduction to the country's coffee culture.</p>
<p>Back to <a href="/guides/origins/">all coffee origins</a>.</p>
""",
)

page(
    "/guides/origins/colombia/",
    "Colombian coffee",
    "Colombian coffee guide: growing regions, the two harvests, flavour profile and the best "
    "ways to brew a balanced Colombian.",
    breadcrumb=ORIGINS_CRUMB,
    body="""
<p>Colombia is the third largest coffee producer in the world and the largest producer of
washed Arabica. Coffee grows along the three branches of the Andes, on slopes so steep that
most cherries are picked by hand and carried down on mules or by jeep.</p>
<h2>Two harvests</h2>
<p>Because Colombia sits on the equator and its mountains create many microclimates, many
regions have a main harvest and a smaller second harvest, called the mitaca. That means
fresh Colombian coffee is available for most of the year.</p>
<h2>Regions</h2>
<p>Huila and Nariño in the south grow coffee at great altitude, producing bright, sweet
and complex cups. The central coffee-growing axis around Caldas, Risaralda and Quindío is
the traditional heartland, with balanced, caramel-sweet coffees. Tolima and Cauca are known
for fruity, juicy lots from small farms.</p>
<h2>Flavour</h2>
<p>A typical Colombian coffee is medium-bodied and sweet, with caramel, red apple and
citrus notes and a clean, gentle acidity. It is a crowd-pleaser: bright enough to be
interesting, round enough to drink every day.</p>
<h2>How to brew it</h2>
<p>Colombian coffee is versatile. A medium roast makes a balanced espresso that works with
or without milk, and a lighter roast makes a sweet, clear pour-over. It also makes a
classic cold brew, with flavours of caramel and cocoa. Many espresso blends pair a
Colombian with a coffee from <a href="../brazil/">Brazil</a> for sweetness and body.</p>
<p>Specialty farms in Colombia increasingly experiment with varieties such as Geisha and
Pink Bourbon and with longer fermentations. These coffees can be wildly fruity; buy a small
bag first to see whether you like the style.</p>
""",
)

page(
    "/guides/origins/brazil/",
    "Brazilian coffee",
    "Brazilian coffee guide: the world's largest producer, natural and pulped natural processing, "
    "nutty chocolate flavours and brewing tips.",
    breadcrumb=ORIGINS_CRUMB,
    body="""
<p>Brazil has been the world's largest coffee producer for more than 150 years and grows
roughly a third of all coffee. Its farms range from family plots to vast mechanised estates
on flat plateaus, where machines harvest the cherries.</p>
<h2>Processing</h2>
<p>Most Brazilian coffee is processed natural, dried inside the cherry on large patios, or
pulped natural, with the skin removed but much of the sticky fruit left on while it dries.
Both methods add sweetness and body and keep acidity low.</p>
<h2>Flavour</h2>
<p>Classic Brazilian coffee tastes of roasted nuts, milk chocolate and caramel, with a
heavy body and soft acidity. It is easy to drink and rarely challenging. Higher-grown lots
from regions such as the Mantiqueira mountains can add notes of dried fruit and a brighter
finish.</p>
<h2>Why Brazil is in your espresso</h2>
<p>That low acidity and heavy body make Brazilian coffee the base of most espresso blends.
It produces thick crema and a sweet shot that stands up to milk. Roasters often add a
brighter coffee from Colombia or Ethiopia on top for complexity.</p>
<h2>How to brew it</h2>
<p>A medium to dark roast Brazilian is superb in a French press, where its chocolate notes
and body shine, and it is a favourite for cold brew because it makes a smooth, sweet
concentrate. For espresso, it is forgiving and easy to dial in. Lighter roasts of good
Brazilian lots make a gentle, nutty pour-over.</p>
<p>Brazilian coffee is also good value, so it is the ideal bean for practising: learning
the French press or dialling in a new grinder costs less when the beans are affordable.</p>
<p>Back to <a href="/guides/origins/">all coffee origins</a>.</p>
""",
)

# --------------------------------------------------------------------------- milk steaming
page(
    "/guides/milk-steaming/",
    "How to steam milk",
    "Steam silky microfoam for lattes, flat whites and cappuccinos: stretching, texturing, "
    "temperature, plant milks and latte art basics.",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>Good milk texture turns an ordinary espresso into a drink you would pay for. The goal is
<a href="/glossary/#microfoam">microfoam</a>: milk full of bubbles so small you cannot see
them, glossy like wet paint, that blends with the coffee instead of sitting on top as
stiff froth.</p>
<h2>Before you start</h2>
<p>Use cold milk in a cold stainless jug filled to just below the spout. Purge the steam
wand for a second to clear condensed water. Whole milk is the easiest to learn with; its
fat and protein make stable, sweet foam.</p>
<h2>Stretching</h2>
<p>Put the wand tip just below the surface, slightly off centre, and open the steam fully.
You should hear a gentle tearing sound as air is drawn in. Keep the tip near the surface
as the milk rises. For a flat white, stretch until the volume grows by about a fifth; for
a cappuccino, by a third or more.</p>
<h2>Texturing</h2>
<p>Then raise the jug so the tip sits deeper and the milk spins in a whirlpool. The spin
folds big bubbles into small ones and mixes the foam through the milk. Stop when the jug is
too hot to hold for more than a second, around 60 to 65 °C. Hotter milk loses its
sweetness and starts to smell cooked.</p>
<h2>Finishing</h2>
<p>Wipe and purge the wand immediately, before milk dries on it. Tap the jug on the counter
to pop any large bubbles and swirl until the surface shines. Pour promptly into fresh
espresso: start high to sink the milk under the crema, then bring the jug close to draw a
heart or a tulip.</p>
<h2>Plant milks</h2>
<p>Barista versions of oat, soy and almond milk contain added fats and stabilisers that help
them foam. Oat is the easiest; soy foams well but can curdle in very acidic coffee; almond
makes thinner foam. Steam plant milks a few degrees cooler.</p>
<h2>Care</h2>
<p>Milk residue inside the wand breeds bacteria and blocks the holes. Soak the tip in hot
water weekly and include the steam circuit when you descale the machine.</p>
""",
)

# --------------------------------------------------------------------------- descaling
page(
    "/guides/descaling/",
    "Descaling your coffee machine",
    "How and how often to descale kettles, drip machines and espresso machines, which descalers "
    "to use, and how to prevent scale.",
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>Limescale is the chalky white deposit that hard water leaves behind when it is heated.
In a kettle it is ugly; in a coffee machine it is expensive. Scale insulates heating
elements, blocks narrow pipes and valves, and changes brewing temperature, so coffee gets
worse long before the machine stops working.</p>
<h2>How often</h2>
<p>That depends on your water. With hard water and daily use, descale a drip machine or an
espresso machine every month or two; with soft or filtered water, every three to six
months. Many machines count cycles and remind you. Our guide to
<a href="/guides/water/">water for coffee</a> explains how to read your water report.</p>
<h2>Which descaler</h2>
<p>Use citric or lactic acid based descalers sold for coffee machines, at the strength the
manufacturer recommends. Avoid vinegar: it is weak, smells for days and can damage seals.
Never use bathroom cleaners, which contain things you do not want to drink.</p>
<h2>Kettles and drip machines</h2>
<p>Fill with descaling solution, run or boil it, leave it for twenty minutes, and then rinse
two or three times with fresh water until no taste remains.</p>
<h2>Espresso machines</h2>
<p>Follow the manual; machines differ. For a single boiler machine, the usual process is to
dissolve descaler in the tank, run half through the group head and the steam wand, wait,
run the rest, then flush with two full tanks of clean water. Dual boiler machines and
machines with a heat exchanger often need the steam boiler drained, which is a job some
owners leave to a technician.</p>
<h2>Prevention</h2>
<p>The best descaling is the one you never need. Use filtered or softened water, empty the
tank instead of topping it up, and keep the steam wand clean after every milk drink. A
machine run on good water can go years without serious scale.</p>
""",
)

# --------------------------------------------------------------------------- storage (no lang attribute)
page(
    "/guides/storage/",
    "How to store coffee beans",
    "Keep coffee fresh for longer: airtight containers, whole beans versus ground, the freezer "
    "question and how long beans last.",
    lang=None,
    breadcrumb=GUIDES_CRUMB,
    body="""
<p>Roasted coffee is at its best for a few weeks. After that, aromatic compounds evaporate
and oils oxidise, and the coffee tastes flat, papery and stale. Good storage cannot stop
this, but it can slow it down a great deal.</p>
<h2>The four enemies</h2>
<p>Oxygen, heat, light and moisture all speed up staling. Keep beans in an opaque, airtight
container in a cool cupboard away from the oven and the window. The bag coffee comes in is
often fine if it has a one-way valve and you squeeze the air out and seal it well.</p>
<h2>Whole beans, not ground</h2>
<p>Grinding exposes a huge surface area to air. Ground coffee loses much of its aroma within
an hour, so buy whole beans and grind just before brewing. This is the best reason to own a
grinder, even a simple one.</p>
<h2>The fridge and the freezer</h2>
<p>Do not store coffee in the fridge: it is damp, and coffee absorbs the smells of
everything around it. The freezer is different. Freezing beans in small airtight portions,
one or two days' worth each, preserves them for months. Take out only what you need and
let the sealed portion reach room temperature before opening it, so no condensation forms
on the beans. Do not refreeze.</p>
<h2>How long does coffee last?</h2>
<p>As a guide, whole beans taste best from about one week to a month after the roast date,
depending on the roast level: dark roasts stale faster because their structure is more
porous and their oils sit on the surface. Sealed, unopened bags with valves keep a little
longer. Ground coffee is best used within a day or two.</p>
<p>Stale coffee is not harmful, just dull. Use it for cold brew, where long steeping makes
the most of what flavour is left, or for baking.</p>
<p>Buying less, more often, is the simplest storage strategy of all. Read about
<a href="/guides/roast-levels/">roast levels</a> to understand why some beans fade faster.</p>
""",
)

# --------------------------------------------------------------------------- glossary
page(
    "/glossary/",
    "Coffee glossary",
    "Plain-language definitions of coffee terms: bloom, body, channeling, crema, extraction, "
    "microfoam, ratio, tamp and more.",
    body="""
<p>Coffee has a lot of jargon. Here are the words we use most across Brew Guide, explained
without the snobbery. Can't find a term? <a href="/search?q=espresso">Search the site</a>.</p>
<h2>A to E</h2>
<h3 id="acidity">Acidity</h3>
<p>The bright, lively, sometimes fruity quality of a coffee, like the tartness of an apple.
Pleasant acidity is prized; sourness means under-extraction.</p>
<h3 id="bloom">Bloom</h3>
<p>The rise and bubbling of fresh grounds when first wetted, as carbon dioxide escapes. In
pour-over, a short pause after the first pour lets the bloom finish so water can reach all
the coffee.</p>
<h3 id="body">Body</h3>
<p>How heavy a coffee feels in the mouth. A French press has a heavy body; a paper-filtered
pour-over is light.</p>
<h3 id="channeling">Channeling</h3>
<p>When water finds a weak path through an espresso puck instead of flowing evenly through
all of it. Channeled shots taste sour and bitter at once.</p>
<h3 id="crema">Crema</h3>
<p>The golden foam on top of an espresso, made of oils and carbon dioxide. Fresh coffee
makes more crema, but thick crema does not guarantee a tasty shot.</p>
<h3 id="extraction">Extraction</h3>
<p>The share of the coffee's soluble material that ends up in the cup. Grind size, time,
temperature and ratio all change it.</p>
<h2>F to Z</h2>
<h3 id="fines">Fines</h3>
<p>Very small particles produced by every grinder. A few are normal; many make coffee muddy
and bitter.</p>
<h3 id="microfoam">Microfoam</h3>
<p>Steamed milk with tiny, invisible bubbles and a glossy surface, used for flat whites and
latte art.</p>
<h3 id="ratio">Ratio</h3>
<p>The weight of coffee compared with the weight of water or beverage, such as 1:16 for
filter coffee or 1:2 for espresso.</p>
<h3 id="tamp">Tamp</h3>
<p>To press ground coffee firmly and evenly into the espresso basket before brewing.</p>
<h3 id="tds">TDS</h3>
<p>Total dissolved solids: how concentrated a coffee is, measured with a refractometer.
Filter coffee is usually 1.2 to 1.5 percent.</p>
<p>For the full method behind these words, start with our
<a href="/guides/espresso/">espresso guide</a> and <a href="/guides/pour-over/">pour-over
guide</a>.</p>
""",
)

# --------------------------------------------------------------------------- orphan: only in the sitemap
page(
    "/guides/orphan-sitemap-only/",
    "Moka pot guide",
    "How to brew in a moka pot without bitterness: grind, water, heat and timing for the classic "
    "Italian stovetop coffee maker.",
    h1="How to use a moka pot",
    breadcrumb=GUIDES_CRUMB,
    lastmod="2026-07-12",
    body="""
<p>The moka pot is the octagonal aluminium stovetop brewer found in almost every Italian
kitchen. Water in the bottom chamber boils, steam pressure pushes it up through a basket of
coffee, and strong coffee collects in the top chamber. It is often called a stovetop
espresso maker, although it brews at only one or two bars, so it makes a strong, rich
coffee rather than true espresso.</p>
<h2>Grind and dose</h2>
<p>Use a grind a little coarser than espresso, like fine sand. Too fine and the pot
struggles, spits and tastes burnt; too coarse and the coffee is thin. Fill the basket to
the top and level it with a finger, but do not tamp: a packed basket can block the flow.
A burr grinder gives the even particles a moka pot needs.</p>
<h2>Start with hot water</h2>
<p>The most useful trick is to fill the bottom chamber with water just off the boil, up to
the safety valve. Starting hot shortens the time the coffee sits on a hot stove and stops
it from cooking before brewing begins. Hold the hot base with a towel when you screw the
pot together.</p>
<h2>Heat and timing</h2>
<p>Use medium heat and leave the lid open. Coffee should flow out in a steady, honey-like
stream. When it turns pale and starts to sputter, take the pot off the heat and cool the
base under a cold tap to stop extraction. This prevents the bitter, metallic finish moka
coffee is known for.</p>
<h2>Beans</h2>
<p>Medium and medium-dark roasts work best, and a sweet, low-acid Brazilian coffee is a
classic choice. Very light roasts can taste sour in a moka pot because the brew is short
and relatively cool.</p>
<h2>Serving and care</h2>
<p>Drink it as it is, dilute it with hot water, or add steamed milk for a homemade latte.
Rinse the pot with water only, since soap strips the coating of coffee oils that protects
aluminium, and replace the rubber gasket once a year. For the right grind, see our
<a href="/guides/grind-size/">grind size guide</a>.</p>
""",
)

# --------------------------------------------------------------------------- blog
page(
    "/blog/",
    "Brew Guide blog",
    "Stories, experiments and mistakes from the Brew Guide kitchen.",
    h1="The Brew Guide blog",
    body="""
<p>Notes from our kitchen: experiments that worked, experiments that did not, and the
occasional rant about coffee bags without roast dates. The guides tell you what to do; the
blog is where we show our working, including the mornings when nothing went to plan. Posts
are written by the three of us in turn and tested on at least two different setups before
they go out, so a recipe that only works on one expensive machine never makes it here.</p>
<section class="post-list">
<h2><a href="/blog/2026/08/why-my-pour-over-tasted-sour/">Why my pour-over tasted sour</a></h2>
<p>14 August 2026. A new bag of Ethiopian coffee, a familiar
recipe and a sour, thin cup. The culprit was not the beans but a grinder that had drifted
coarser, and the fix took one click.</p>
<h2><a href="/blog/2026/05/summer-cold-brew-experiments/">Summer cold brew experiments</a></h2>
<p>21 May 2026. We steeped six coffees for twelve, eighteen and twenty-four hours and tasted
them blind. The winner surprised us, and so did how little the steep time mattered after
the sixteenth hour.</p>
<h2><a href="/blog/2026/03/dialing-in-a-new-bag/">Dialling in a new bag of espresso</a></h2>
<p>9 March 2026. Every bag of coffee behaves differently. This is the routine we follow to
get from the first sink shot to a sweet espresso in as few shots as possible, without
wasting half the bag.</p>
</section>
<nav class="pagination" aria-label="Pages">
<span>1</span> <a href="/blog/page/2/">2</a> <a href="/blog/?page=3">3</a>
<a href="?p=2" rel="next">Older posts &raquo;</a>
</nav>
""",
)

page(
    "/blog/page/2/",
    "Brew Guide blog, page 2",
    "Older posts from the Brew Guide blog.",
    h1="The Brew Guide blog: older posts",
    canonical="/blog/page/2/",
    body="""
<p>Older stories from the Brew Guide kitchen.</p>
<section class="post-list">
<h2><a href="/blog/2025/11/holiday-gift-guide-grinders/">Holiday gift guide: grinders for every
budget</a></h2>
<p>20 November 2025. Buying for a coffee lover? Skip the gadget aisle and give them a good
grinder. Our picks from thirty to three hundred euros.</p>
</section>
<nav class="pagination" aria-label="Pages">
<a href="/blog/">&laquo; Newer posts</a> <a href="/blog/">1</a> <span>2</span>
<a href="/blog/?page=3">3</a>
</nav>
""",
)

page(
    "/blog/2026/08/why-my-pour-over-tasted-sour/",
    "Why my pour-over tasted sour",
    "A sour pour-over, a drifting grinder and what it taught us about dialling in filter coffee "
    "by taste.",
    breadcrumb=BLOG_CRUMB,
    lastmod="2026-08-14",
    body="""
<p class="byline">By Maya, <time datetime="2026-08-14T07:30:00+02:00">14 August 2026</time></p>
<p>Last week I opened a new bag of washed Ethiopian coffee, the kind that usually tastes of
jasmine and lemon tea. I brewed it exactly as I brew every light roast: fifteen grams, two
hundred and fifty grams of water, the usual pours. It tasted like lemon juice. Thin, sharp,
almost salty, and gone from the palate in a second.</p>
<h2>Blaming the beans</h2>
<p>My first thought was that the roaster had under-developed the beans. Light roasts can
taste grassy and sour when the roast is too short. But a friend had brewed the same bag and
loved it. So the problem was on my side of the counter.</p>
<h2>The clue was the clock</h2>
<p>I brewed again and watched the timer. The water had drained by two minutes, at least
thirty seconds faster than usual. Fast draining means the water spent too little time with
the coffee, which points at grind size: the particles were too big. My hand grinder had
slowly drifted coarser as the adjustment ring loosened. One click finer, and the brew
finished at three minutes and tasted sweet, floral and long.</p>
<h2>What I changed for good</h2>
<ul>
<li>I now check my brew time every morning. It is the quickest warning that something has
changed.</li>
<li>I mark my grinder setting with a pen line, so drift is visible.</li>
<li>I changed one thing at a time. If I had also changed the water temperature and the
ratio, I would never have known which change fixed it.</li>
</ul>
<h2>Sour is not always the grind</h2>
<p>Sour coffee can also come from water that is too cool, from very soft water with no
minerals, or from a brew ratio with too much water. But grind is the first thing to check,
because it is the easiest to change. The <a href="/guides/grind-size/#chart">grind size
chart</a> is a good reference, and the <a href="/guides/pour-over/">pour-over guide</a> has the
full recipe I use.</p>
<p class="tags">Tagged: <a href="/blog/tag/espresso/">espresso</a>, pour-over</p>
""",
)

page(
    "/blog/2026/05/summer-cold-brew-experiments/",
    "Summer cold brew experiments",
    "Six coffees, three steep times, one blind tasting: what really matters when making cold "
    "brew at home.",
    breadcrumb=BLOG_CRUMB,
    lastmod="2026-05-21",
    head=[
        '<script type="application/ld+json">',
        '{"@context": "https://schema.org", "@type": "BlogPosting",',
        ' "headline": "Summer cold brew experiments",',
        ' "datePublished": "2026-05-21T09:00:00+00:00", "dateModified": "2026-06-02T10:15:00+00:00",',
        ' "author": {"@type": "Person", "name": "Tom"}}',
        "</script>",
    ],
    body="""
<p>Every summer our inboxes fill with cold brew questions. How long should it steep? Does
the bean matter? Is the fridge better than the counter? This year we stopped guessing and
ran a proper test.</p>
<h2>The setup</h2>
<p>We chose six coffees: a dark Brazilian, a medium Colombian, a natural Ethiopian, a washed
Kenyan, a supermarket espresso blend and a decaf. Each was ground very coarse on the same
burr grinder and steeped at a ratio of one to ten in the fridge for twelve, eighteen and
twenty-four hours. We strained everything through paper, diluted one to one and tasted
blind.</p>
<h2>What we found</h2>
<p>The bean mattered far more than the steep time. The Brazilian and the Colombian made the
classic chocolate-and-caramel cold brew most people expect. The natural Ethiopian was the
surprise favourite: juicy, like iced berry tea. The washed Kenyan tasted oddly flat, as cold
extraction lost the bright acidity that makes it special hot.</p>
<p>Steep time mattered less than we expected. Twelve hours was noticeably weaker and a little
sour; eighteen and twenty-four were hard to tell apart, with twenty-four slightly more woody.
We now steep for sixteen to eighteen hours.</p>
<h2>Fridge or counter</h2>
<p>Counter steeping extracted faster and tasted a little rounder, but it also picked up
stale, oxidised notes by the next day. The fridge batch stayed fresh for more than a week.</p>
<h2>Our recipe now</h2>
<p>It is the one in our <a href="/guides/cold-brew/?utm_source=blog&amp;utm_medium=referral">cold
brew guide</a>, with one change: try a fruity natural coffee at least once. If you do not own
a cold brew maker, a French press does the job perfectly.</p>
""",
)

page(
    "/blog/2026/03/dialing-in-a-new-bag/",
    "Dialling in a new bag of espresso",
    "Our routine for dialling in a new bag of espresso beans in as few shots as possible.",
    breadcrumb=BLOG_CRUMB,
    lastmod="2026-03-11",
    head=[
        '<meta property="og:type" content="article">',
        '<meta property="article:published_time" content="2026-03-09T08:00:00+00:00">',
        '<meta property="article:modified_time" content="2026-03-11T17:45:00+00:00">',
    ],
    body="""
<p>A new bag of espresso beans always means a few sink shots. The question is how few. Here
is the routine we use at home to go from the first shot to a sweet one, usually in four or
five attempts.</p>
<h2>Before the first shot</h2>
<p>Check the roast date. Espresso from beans roasted in the last four or five days often
gushes and tastes sharp because of all the carbon dioxide; give them a week. Weigh your dose
every time and keep it fixed, usually eighteen grams for a standard double basket.</p>
<h2>Shot one: get into the range</h2>
<p>Start with the grind setting from your previous bag and aim for thirty-six grams out. If
the shot runs in under twenty seconds, grind noticeably finer; if it takes more than forty,
coarser. Do not taste yet; just get the time close to twenty-eight seconds.</p>
<h2>Shots two and three: taste</h2>
<p>Once the time is sensible, taste. Sour and thin means grind a touch finer or pull a
longer ratio. Bitter and dry means a touch coarser or a shorter ratio. Change only one thing
per shot and write it down.</p>
<h2>Shot four: adjust for milk</h2>
<p>If you drink flat whites, taste one with milk before deciding. A shot that is a little
too intense on its own can be perfect under steamed milk.</p>
<h2>Keeping it dialled</h2>
<p>Beans change as they age: most bags need a slightly finer grind after a week or two.
Store them airtight, away from light and heat, and consider freezing part of a big bag.
The full method is in our <a href="/guides/espresso/#dialing-in">espresso guide</a>, and the
<a href="/guides/espresso/">espresso guide</a> also covers puck preparation.</p>
<p class="tags">Tagged: <a href="/blog/tag/espresso/">espresso</a></p>
""",
)

page(
    "/blog/2025/11/holiday-gift-guide-grinders/",
    "Holiday gift guide: grinders for every budget",
    "The best coffee grinders to give this year, from a thirty euro hand grinder to an espresso "
    "grinder that will last a decade.",
    breadcrumb=BLOG_CRUMB,
    lastmod="2025-11-20",
    head=['<meta property="article:published_time" content="2025-11-20">'],
    body="""
<p>Shopping for someone who loves coffee? The best gift is not another gadget but a good
grinder. Fresh grinding makes a bigger difference to the cup than any machine, and most
people put off buying one because it feels like a dull purchase. Here are our picks.</p>
<h2>Under 50 euros: a ceramic hand grinder</h2>
<p>A basic hand grinder with ceramic conical burrs is a huge step up from pre-ground coffee
or a blade grinder. It is slow for espresso but fine for filter coffee, the French press and
the AeroPress. Look for one with a metal shaft and a bearing at the top; cheap designs
wobble and grind unevenly.</p>
<h2>50 to 150 euros: a serious hand grinder or an entry electric</h2>
<p>In this range, hand grinders with steel burrs grind fast and evenly, and many can manage
espresso. An entry electric grinder is more convenient for a household but usually less
consistent than a hand grinder at the same price. Pick by how much coffee the person makes
each day.</p>
<h2>150 to 300 euros: an electric grinder for filter or espresso</h2>
<p>Here you choose between a filter grinder with large burrs and low retention, and an
espresso grinder with fine, stepless adjustment. Very few grinders do both jobs well. Ask
what your coffee lover brews most.</p>
<h2>Extras that help</h2>
<p>Add a bag of fresh beans from a local roaster, and a small scale that reads to a tenth of
a gram. Together with a grinder, those three things transform home coffee. If they already
own an AeroPress, a spare pack of filters and a travel case make a good stocking filler; the
<a href="/guides/aeropress/;jsessionid=ABC">AeroPress recipes</a> page has our favourite
recipes.</p>
<p>Our full buying advice is in the <a href="/guides/grinders/">grinder guide</a>.</p>
""",
)

page(
    "/blog/tag/espresso/",
    "Posts tagged espresso",
    "Blog posts about espresso.",
    head=['<meta name="robots" content="noindex, follow">'],
    breadcrumb=BLOG_CRUMB,
    body="""
<p>All Brew Guide posts tagged <em>espresso</em>.</p>
<ul>
<li><a href="/blog/2026/03/dialing-in-a-new-bag/">Dialling in a new bag of espresso</a></li>
<li><a href="/blog/2026/08/why-my-pour-over-tasted-sour/">Why my pour-over tasted sour</a></li>
</ul>
""",
)

# --------------------------------------------------------------------------- about
page(
    "/about/",
    "About Brew Guide",
    "Who writes Brew Guide, how we test equipment, and how the site is funded.",
    h1="About Brew Guide",
    body="""
<p>Brew Guide started in 2019 as a shared notebook between three friends who were tired of
coffee advice that assumed a café budget. We are home baristas, not professionals: one of us
is a nurse, one a software developer and one a secondary school chemistry teacher, which
explains the amount of writing about water.</p>
<h2>How we test</h2>
<p>Every recipe on the site is brewed by at least two of us, on different equipment and with
different water, before it is published. We weigh everything, time everything and taste
blind when we compare. When we review equipment, we buy it ourselves at retail price and
use it for at least a month. If a guide says something works, it worked in our kitchens,
more than once.</p>
<h2>How the site is funded</h2>
<p>Brew Guide is funded by readers who buy through our affiliate links and by a small
number of newsletter sponsors, always clearly marked. Affiliate links never change our
recommendations; several of our favourite grinders earn us nothing at all. We do not run
display advertising and we never accept free products in exchange for coverage.</p>
<h2>Corrections</h2>
<p>Coffee science moves, and we get things wrong. When a reader points out a mistake, we fix
it and note the change at the bottom of the page. Get in touch through the
<a href="contact/">contact page</a>.</p>
<h2 id="privacy">Privacy</h2>
<p>We use a privacy-friendly analytics tool that does not track you across sites, and a
cookie to remember your preferred units and brew timer settings. We never sell reader data.
Newsletter addresses are used only to send the newsletter and are deleted when you
unsubscribe.</p>
<h2>For the team</h2>
<p>Team members can find this month's tasting schedule in the
<a href="/private/secret/">staff area</a>.</p>
""",
)

page(
    "/about/contact/",
    "Contact us",
    "How to contact the Brew Guide team.",
    h1="Contact us",
    body="""
<p>Questions, corrections or recipe ideas? Email hello@brewguide.example and one of us will
reply within a week. We do not accept sponsored posts or free equipment. Press enquiries
go to the same address.</p>
""",
)

# --------------------------------------------------------------------------- French page
page(
    "/fr/guide-espresso/",
    "Réussir son espresso à la maison",
    "Guide de l'espresso : matériel, recette 1:2, préparation de la galette, réglage de la mouture "
    "et entretien de la machine.",
    lang="fr",
    head=['<link rel="alternate" hreflang="en" href="{{BASE}}/guides/espresso/">'],
    body="""
<p>L'espresso est un café préparé en forçant de l'eau chaude, sous une pression d'environ
neuf bars, à travers une galette de café moulu très fin. L'extraction dure une trentaine de
secondes, et pendant ce court moment la moindre erreur se ressent dans la tasse. C'est ce
qui rend l'espresso difficile au début, et si satisfaisant quand on le maîtrise.</p>
<h2>Le matériel</h2>
<p>Il faut une machine qui garde une température stable, un moulin capable de réglages fins,
une balance précise au dixième de gramme et des grains fraîchement torréfiés. Le moulin est
l'élément le plus important : une machine modeste associée à un bon moulin à meules donne
de meilleurs résultats qu'une machine coûteuse avec du café déjà moulu.</p>
<h2>La recette</h2>
<p>Commencez avec un ratio de un pour deux : dix-huit grammes de café moulu pour environ
trente-six grammes d'espresso dans la tasse, en vingt-cinq à trente secondes. Utilisez une
eau peu calcaire, mais pas totalement déminéralisée, pour protéger la machine et garder les
arômes.</p>
<h2>Préparer la galette</h2>
<p>Répartissez la mouture de manière homogène dans le filtre avant de tasser. Tassez bien à
plat et avec une pression régulière. Une galette irrégulière laisse l'eau passer par un
chemin préférentiel, et l'espresso devient à la fois acide et amer.</p>
<h2>Régler la mouture</h2>
<p>Goûtez chaque tasse. Si l'extraction est rapide et le goût acide, moulez plus fin. Si elle
est lente et le goût amer, moulez plus gros. Ne changez qu'un paramètre à la fois et notez
vos réglages. Les torréfactions claires demandent en général une mouture plus fine et une
eau plus chaude que les mélanges italiens très torréfiés.</p>
<h2>Entretien</h2>
<p>Nettoyez la buse vapeur après chaque utilisation, rincez le groupe chaque semaine et
détartrez la machine régulièrement, selon la dureté de votre eau. Le calcaire est la
première cause de panne des machines à espresso domestiques.</p>
<p>Ce guide existe aussi <a href="/guides/espresso/" hreflang="en">en anglais</a>.</p>
""",
)

# --------------------------------------------------------------------------- JavaScript-only links
page(
    "/js/",
    "Interactive brew timer",
    "A brew timer that counts the bloom and the pours for pour-over coffee.",
    body="""
<p>Set your dose and ratio, press start, and the timer tells you when to pour. Related
reading appears below once the page has loaded.</p>
<div id="timer" class="brew-timer">00:00</div>
<div id="related"></div>
<script>
document.addEventListener("DOMContentLoaded", function () {
  var related = document.getElementById("related");
  var links = [
    ["/guides/cold-brew/", "Cold brew, the easy way"],
    ["/js-only-target/", "Brew ratio calculator"]
  ];
  var list = document.createElement("ul");
  links.forEach(function (pair) {
    var item = document.createElement("li");
    var link = document.createElement("a");
    link.setAttribute("href", pair[0]);
    link.textContent = pair[1];
    item.appendChild(link);
    list.appendChild(item);
  });
  related.appendChild(list);
});
</script>
""",
)

page(
    "/js-only-target/",
    "Brew ratio calculator",
    "How to use brew ratios to scale any coffee recipe up or down, with worked examples.",
    body="""
<p>A brew ratio is the weight of coffee compared with the weight of water. Writing recipes
as ratios instead of scoops and cups makes them easy to scale: a recipe that works for one
mug works for a whole carafe if you keep the ratio the same.</p>
<h2>Common ratios</h2>
<ul>
<li>Espresso: 1:2, for example 18 grams of coffee for 36 grams of espresso.</li>
<li>AeroPress: 1:14 to 1:16.</li>
<li>Pour-over and drip: 1:15 to 1:17.</li>
<li>French press: 1:15 to 1:16.</li>
<li>Cold brew concentrate: 1:8 to 1:10, diluted before drinking.</li>
</ul>
<h2>Scaling a recipe</h2>
<p>To make more coffee, multiply both the coffee and the water by the same number. A 15 gram,
250 gram pour-over becomes 30 grams and 500 grams for two cups. For percolation methods such
as pour-over, a bigger dose also makes a deeper bed of coffee, so the brew takes longer; grind
a little coarser to keep the time in range. Immersion methods scale almost perfectly.</p>
<h2>Strength versus extraction</h2>
<p>Changing the ratio changes strength: less water gives a stronger, more concentrated cup.
It also changes extraction, because more water pulls more material out of the same grounds.
That is why a coffee brewed too strong can still taste sour, and one brewed too weak can
taste bitter. Adjust the ratio for strength and the grind for taste.</p>
<h2>Weighing water</h2>
<p>One millilitre of water weighs about one gram, so a kitchen scale measures water too. Put
your brewer on the scale, tare it, and pour to the target weight. It is far more accurate
than the markings on a kettle, and it is how every recipe on this site is written. Weighing
both coffee and water is the single habit that makes results repeatable from one morning to
the next, and from one kitchen to another.</p>
""",
)

# --------------------------------------------------------------------------- robots.txt Disallow
page(
    "/private/secret/",
    "Staff tasting schedule",
    "Internal tasting schedule for the Brew Guide team.",
    head=['<meta name="robots" content="noindex, nofollow">'],
    body="""
<p>This page is for the Brew Guide team. Tasting sessions are on the first Saturday of each
month at ten. Bring two coffees you have brewed at least five times, your notes, and your
own water. This month's theme is natural-processed coffees from Ethiopia and Brazil, brewed
as pour-over and as espresso.</p>
""",
)

page(
    "/search/",
    "Search",
    "Search Brew Guide.",
    head=['<meta name="robots" content="noindex, nofollow">'],
    canonical=None,
    body="""
<p>Search results appear here. Try a different word if nothing matches.</p>
""",
)
